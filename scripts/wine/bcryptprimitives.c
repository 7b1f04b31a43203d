/*
 * ProcessPrng for Wine releases without bcryptprimitives.dll (Debian 12's
 * Wine 8.0). Go's Windows runtime (since Go 1.22) loads it from System32 at
 * start-up and stops with "bcryptprimitives.dll not found" otherwise, so no
 * Go program starts under that Wine. Test harness only (scripts/wine-test.sh):
 * real Windows 10+ ships the DLL. ProcessPrng fills the buffer from the
 * system RNG and, as documented, always returns TRUE; this one returns FALSE
 * if BCryptGenRandom fails, which Go's runtime then reports.
 */
#include <windows.h>
#include <bcrypt.h>

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T n) {
  while (n > 0) {
    ULONG k = n > 0x10000000 ? 0x10000000 : (ULONG)n;
    if (BCryptGenRandom(NULL, data, k, BCRYPT_USE_SYSTEM_PREFERRED_RNG) != 0) return FALSE;
    data += k;
    n -= k;
  }
  return TRUE;
}

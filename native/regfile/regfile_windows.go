package regfile

import "os"

// Windows has no FIFOs that block an open: CreateFile on a named pipe with
// no free instance fails at once (ERROR_PIPE_BUSY). Pipes and character
// devices (NUL, CON) are refused by their type, which os.Stat reports from
// GetFileType; disk and volume devices (\\.\PhysicalDrive0, \\.\C:) stat as
// files, so paths in the device namespace are refused by name (checkPath).
const openFlags = 0

func setBlocking(*os.File) error { return nil }

func checkPath(path string) error { return deviceNamespace(path) }

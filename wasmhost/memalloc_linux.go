package wasmhost

import "syscall"

// mapNoReserve: do not reserve swap for the whole cap up front.
const mapNoReserve = syscall.MAP_NORESERVE

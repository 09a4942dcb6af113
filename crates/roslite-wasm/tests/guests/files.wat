;; Tries to open "secret.txt" in the first preopened directory (descriptor 3) for reading and
;; exits with the WASI errno it got (0: opened).
(module
  (import "wasi_snapshot_preview1" "path_open"
    (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (memory (export "memory") 1)
  (data (i32.const 16) "secret.txt")
  (func (export "_start")
    ;; path_open(fd 3, lookupflags 0, path 16, len 10, oflags 0, rights fd_read (2), inheriting 0, fdflags 0, out 64)
    (call $proc_exit (call $path_open (i32.const 3) (i32.const 0) (i32.const 16) (i32.const 10)
      (i32.const 0) (i64.const 2) (i64.const 0) (i32.const 0) (i32.const 64))))
  (func (export "roslite_guest_dispatch") (param i32 i32 i64 i64 i64 i64) (result i32) (i32.const 0))
  (func (export "roslite_guest_alloc") (param i32) (result i32) (i32.const 0))
  (func (export "roslite_guest_free") (param i32)))

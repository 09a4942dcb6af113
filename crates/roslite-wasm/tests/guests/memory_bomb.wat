;; Grows its memory a page at a time until the host refuses, then exits with the number of
;; pages it holds.
(module
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (memory (export "memory") 1)
  (func (export "_start")
    (loop $grow
      (br_if $grow (i32.ne (memory.grow (i32.const 1)) (i32.const -1))))
    (call $proc_exit (memory.size)))
  (func (export "roslite_guest_dispatch") (param i32 i32 i64 i64 i64 i64) (result i32) (i32.const 0))
  (func (export "roslite_guest_alloc") (param i32) (result i32) (i32.const 0))
  (func (export "roslite_guest_free") (param i32)))

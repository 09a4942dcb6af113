;; Built against a future guest ABI.
(module
  (import "roslite_v2" "publish" (func (param i64 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "_start"))
  (func (export "roslite_guest_dispatch") (param i32 i32 i64 i64 i64 i64) (result i32) (i32.const 0))
  (func (export "roslite_guest_alloc") (param i32) (result i32) (i32.const 0))
  (func (export "roslite_guest_free") (param i32)))

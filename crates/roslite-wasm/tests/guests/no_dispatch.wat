;; A WASI command that was not linked with the roslite guest library.
(module
  (memory (export "memory") 1)
  (func (export "_start"))
  (func (export "roslite_guest_alloc") (param i32) (result i32) (i32.const 0))
  (func (export "roslite_guest_free") (param i32)))

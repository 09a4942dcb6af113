;; An echo node, for `roslite bench wasm`'s call round trip and the host's parking tests: every
;; message on /wasm_bench/ping is published again, byte for byte, on /wasm_bench/pong. Written
;; in WebAssembly text so that neither needs a guest compiler; @HASH@ is std_msgs/msg/String's
;; type hash.
(module
  (import "roslite_v1" "context_init" (func $context_init (param i32 i32 i32) (result i32)))
  (import "roslite_v1" "node_create" (func $node_create (param i64 i32 i32 i32) (result i32)))
  (import "roslite_v1" "qos_profile" (func $qos_profile (param i32 i32) (result i32)))
  (import "roslite_v1" "publisher_create" (func $publisher_create (param i64 i32 i32 i32 i32) (result i32)))
  (import "roslite_v1" "subscription_create" (func $subscription_create (param i64 i64 i32 i32 i32 i32 i32) (result i32)))
  (import "roslite_v1" "publish" (func $publish (param i64 i32 i32) (result i32)))
  (import "roslite_v1" "executor_create" (func $executor_create (param i64 i32) (result i32)))
  (import "roslite_v1" "executor_add_node" (func $executor_add_node (param i64 i64) (result i32)))
  (import "roslite_v1" "executor_spin" (func $executor_spin (param i64) (result i32)))
  ;; From 64 KiB: a parked stack's 32 KiB and a message of up to 1 MiB.
  (memory (export "memory") 18)
  (data (i32.const 16) "wasm_echo\00")
  (data (i32.const 32) "/wasm_bench/ping\00")
  (data (i32.const 64) "/wasm_bench/pong\00")
  (data (i32.const 96) "std_msgs/msg/String\00")
  (data (i32.const 128) "@HASH@\00")
  (data (i32.const 256) "\60\00\00\00\80\00\00\00")
  (func $check (param i32) (if (local.get 0) (then unreachable)))
  (func (export "_start")
    (call $check (call $context_init (i32.const 0) (i32.const 0) (i32.const 512)))
    (call $check (call $node_create (i64.load (i32.const 512)) (i32.const 16) (i32.const 0) (i32.const 520)))
    (call $check (call $qos_profile (i32.const 0) (i32.const 600)))
    (call $check (call $publisher_create (i64.load (i32.const 520)) (i32.const 64) (i32.const 256) (i32.const 600) (i32.const 528)))
    (call $check (call $subscription_create (i64.load (i32.const 520)) (i64.const 0) (i32.const 32) (i32.const 256) (i32.const 600) (i32.const 1) (i32.const 536)))
    (call $check (call $executor_create (i64.load (i32.const 512)) (i32.const 544)))
    (call $check (call $executor_add_node (i64.load (i32.const 544)) (i64.load (i32.const 520))))
    (call $check (call $executor_spin (i64.load (i32.const 544)))))
  (func (export "roslite_guest_dispatch") (param $slot i32) (param $kind i32) (param $a i64) (param $b i64) (param i64 i64) (result i32)
    (call $check (call $publish (i64.load (i32.const 528)) (i32.wrap_i64 (local.get $a)) (i32.wrap_i64 (local.get $b))))
    (i32.const 0))
  ;; A stack allocator: the host frees in the reverse order it allocates (a message after the
  ;; buffer a parked guest's stack is saved in, which is never freed).
  (global $next (mut i32) (i32.const 65536))
  (func (export "roslite_guest_alloc") (param $size i32) (result i32) (local $at i32)
    (if (i32.gt_u (local.get $size) (i32.const 1048576)) (then (return (i32.const 0))))
    (local.set $at (global.get $next))
    (global.set $next
      (i32.add (local.get $at) (i32.and (i32.add (local.get $size) (i32.const 15)) (i32.const -16))))
    (local.get $at))
  (func (export "roslite_guest_free") (param $at i32) (global.set $next (local.get $at))))

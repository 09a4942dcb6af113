//! The transport conformance suite for shared memory and Unix sockets.
//!
//! `harness = false`: this binary re-executes itself as the peer process of the peer-death
//! tests, so `main` first checks whether it is such a child. Arguments are substring filters on
//! `transport::test_name`, like libtest's.

use std::panic::{catch_unwind, AssertUnwindSafe};

use roslite_shm::conformance::{self, Shm, Transport, Uds};

fn cases<T: Transport>() -> Vec<(String, fn())> {
    conformance::tests::<T>()
        .into_iter()
        .map(|(name, test)| (format!("{}::{name}", T::NAME), test))
        .collect()
}

fn main() {
    conformance::run_child_if_requested::<Shm>();
    conformance::run_child_if_requested::<Uds>();
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let mut all = cases::<Shm>();
    all.extend(cases::<Uds>());
    let selected: Vec<_> = all
        .into_iter()
        .filter(|(name, _)| filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str())))
        .collect();
    println!("running {} tests", selected.len());
    let mut failed = Vec::new();
    for (name, test) in selected {
        println!("test {name} ...");
        match catch_unwind(AssertUnwindSafe(test)) {
            Ok(()) => println!("test {name} ... ok"),
            Err(_) => {
                println!("test {name} ... FAILED");
                failed.push(name);
            }
        }
    }
    if failed.is_empty() {
        println!("test result: ok");
    } else {
        println!("test result: FAILED: {failed:?}");
        std::process::exit(1);
    }
}

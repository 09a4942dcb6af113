//! wasmtime: AOT machine code (`.cwasm`) or Cranelift at load time, epoch interruption for
//! callback deadlines, a store limiter for memory.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use wasmtime::{
    AsContextMut, Caller, Config, Engine, Instance, Linker, Memory, Module, Mutability, Store,
    StoreContextMut, StoreLimits, StoreLimitsBuilder, Trap, TypedFunc, Val,
};

use super::{Limits, LoadError};
use crate::abi::{self, CallbackKind};
use crate::calls::enter;
use crate::fault::Fault;
use crate::guest::GuestCalls;
use crate::guest::GuestState;
use crate::guest::Resident;
use crate::memory::GuestMemory;
use crate::snapshot::GlobalValue;
use crate::waiting::{self, Asyncify};

/// How often the epoch advances: the resolution of callback deadlines.
pub const EPOCH_TICK: Duration = Duration::from_millis(10);

/// The configuration every `.cwasm` must be compiled with to load here (wasmtime checks it):
/// epoch checks in loops and calls.
pub fn config() -> Config {
    let mut config = Config::new();
    config.epoch_interruption(true);
    config
}

pub(crate) fn new_engine() -> Engine {
    let engine = Engine::new(&config()).expect("wasmtime accepts the host's configuration");
    let ticking = engine.weak();
    std::thread::Builder::new()
        .name("wasm-epoch".into())
        .spawn(move || {
            while let Some(engine) = ticking.upgrade() {
                engine.increment_epoch();
                drop(engine);
                std::thread::sleep(EPOCH_TICK);
            }
        })
        .expect("spawn the epoch ticker");
    engine
}

pub fn deserialize(bytes: &[u8]) -> Result<Module, LoadError> {
    // SAFETY: wasmtime checks that the artefact was made by this wasmtime version for this
    // target and configuration; what it cannot check is that the file came from `roslite wasm
    // compile` and not from someone crafting machine code, which is why `.cwasm` files are
    // the user's own build products (docs/wasm.md).
    unsafe { Module::deserialize(super::shared_wasmtime(), bytes) }.map_err(|e| {
        LoadError::Invalid(format!(
            "{e:#}; a .cwasm runs only on the machine kind and roslite version it was compiled \
             for: compile the .wasm again with `roslite wasm compile`"
        ))
    })
}

#[cfg(feature = "compiler")]
pub fn compile(bytes: &[u8]) -> Result<Module, LoadError> {
    Module::new(super::shared_wasmtime(), bytes).map_err(|e| LoadError::Invalid(format!("{e:#}")))
}

#[cfg(not(feature = "compiler"))]
pub fn compile(_bytes: &[u8]) -> Result<Module, LoadError> {
    Err(LoadError::NeedsCompiler)
}

/// Compiles `wasm` to a `.cwasm` for `target` (a Rust target triple; None: this machine),
/// instrumented for snapshots first ([`crate::instrument`]), as every module this host runs.
#[cfg(feature = "compiler")]
pub fn precompile(wasm: &[u8], target: Option<&str>) -> Result<Vec<u8>, String> {
    let wasm = crate::instrument::instrument(wasm)?;
    precompile_as_is(&wasm, target)
}

#[cfg(feature = "compiler")]
fn precompile_as_is(wasm: &[u8], target: Option<&str>) -> Result<Vec<u8>, String> {
    let mut config = config();
    if let Some(target) = target {
        config.target(target).map_err(|e| format!("{e:#}"))?;
    }
    let engine = Engine::new(&config).map_err(|e| format!("{e:#}"))?;
    engine.precompile_module(wasm).map_err(|e| format!("{e:#}"))
}

/// `roslite_guest_dispatch`: (slot, kind, a, b, c, d) -> result.
type DispatchFunc = TypedFunc<(i32, i32, i64, i64, i64, i64), i32>;

/// The Asyncify exports of a guest prepared for parking (crate::park).
#[derive(Clone)]
struct AsyncifyFuncs {
    start_unwind: TypedFunc<i32, ()>,
    start_rewind: TypedFunc<i32, ()>,
    stop_unwind: TypedFunc<(), ()>,
    stop_rewind: TypedFunc<(), ()>,
}

impl AsyncifyFuncs {
    fn of(instance: &Instance, store: &mut Store<Data>) -> Option<Self> {
        Some(Self {
            start_unwind: instance
                .get_typed_func(&mut *store, waiting::EXPORT_START_UNWIND)
                .ok()?,
            start_rewind: instance
                .get_typed_func(&mut *store, waiting::EXPORT_START_REWIND)
                .ok()?,
            stop_unwind: instance
                .get_typed_func(&mut *store, waiting::EXPORT_STOP_UNWIND)
                .ok()?,
            stop_rewind: instance
                .get_typed_func(&mut *store, waiting::EXPORT_STOP_REWIND)
                .ok()?,
        })
    }
}

pub struct Data {
    guest: GuestState,
    instance: Option<Instance>,
    memory: Option<Memory>,
    dispatch: Option<DispatchFunc>,
    alloc: Option<TypedFunc<i32, i32>>,
    free: Option<TypedFunc<i32, ()>>,
    start: Option<TypedFunc<(), ()>>,
    asyncify: Option<AsyncifyFuncs>,
    limits: StoreLimits,
    deadline_ticks: u64,
}

struct Guest<'a>(StoreContextMut<'a, Data>);

fn classify(error: wasmtime::Error, during: &str, deadline: Duration) -> Fault {
    if let Some(fault) = error.downcast_ref::<Fault>() {
        return fault.clone();
    }
    match error.downcast_ref::<Trap>() {
        Some(Trap::Interrupt) => Fault::Deadline {
            during: during.to_owned(),
            limit: format!("deadline of {deadline:?} (--deadline-ms)"),
        },
        _ => Fault::Trap {
            during: during.to_owned(),
            message: format!("{error:#}"),
        },
    }
}

impl Guest<'_> {
    fn renew_budget(&mut self) {
        let ticks = self.0.data().deadline_ticks;
        self.0.set_epoch_deadline(ticks);
    }
}

impl GuestCalls for Guest<'_> {
    fn parts(&mut self) -> (GuestMemory<'_>, &mut GuestState) {
        let memory = self.0.data().memory;
        match memory {
            Some(memory) => {
                let (bytes, data) = memory.data_and_store_mut(&mut self.0);
                (GuestMemory::new(bytes), &mut data.guest)
            }
            None => (GuestMemory::new(&mut []), &mut self.0.data_mut().guest),
        }
    }

    fn alloc(&mut self, size: u32) -> Result<u32, Fault> {
        let f = self.0.data().alloc.clone().expect("checked at load");
        self.renew_budget();
        f.call(&mut self.0, size as i32)
            .map(|at| at as u32)
            .map_err(|e| classify(e, abi::EXPORT_ALLOC, deadline_of(self)))
    }

    fn free(&mut self, pointer: u32) -> Result<(), Fault> {
        let f = self.0.data().free.clone().expect("checked at load");
        self.renew_budget();
        f.call(&mut self.0, pointer as i32)
            .map_err(|e| classify(e, abi::EXPORT_FREE, deadline_of(self)))
    }

    fn dispatch(
        &mut self,
        slot: i32,
        kind: CallbackKind,
        [a, b, c, d]: [i64; 4],
        during: &str,
    ) -> Result<i32, Fault> {
        let f = self.0.data().dispatch.clone().expect("checked at load");
        self.renew_budget();
        self.0.data_mut().guest.enter_callback();
        let result = f.call(&mut self.0, (slot, kind as i32, a, b, c, d));
        self.0.data_mut().guest.leave_callback();
        result.map_err(|e| classify(e, during, deadline_of(self)))
    }

    fn start(&mut self) -> Result<(), Fault> {
        let f = self.0.data().start.clone().expect("checked at load");
        self.renew_budget();
        f.call(&mut self.0, ())
            .map_err(|e| classify(e, "main", deadline_of(self)))
    }

    fn asyncify(&mut self, call: Asyncify) -> Result<(), Fault> {
        let Some(f) = self.0.data().asyncify.clone() else {
            return Err(Fault::Abi(format!(
                "the guest does not export {}",
                call.export()
            )));
        };
        let result = match call {
            Asyncify::StartUnwind(at) => f.start_unwind.call(&mut self.0, at as i32),
            Asyncify::StartRewind(at) => f.start_rewind.call(&mut self.0, at as i32),
            Asyncify::StopUnwind => f.stop_unwind.call(&mut self.0, ()),
            Asyncify::StopRewind => f.stop_rewind.call(&mut self.0, ()),
        };
        result.map_err(|e| classify(e, call.export(), deadline_of(self)))
    }

    fn can_park(&mut self) -> bool {
        self.can_park_at_all() && self.0.data().guest.dispatching == 0
    }

    fn can_park_at_all(&mut self) -> bool {
        self.0.data().asyncify.is_some()
    }

    fn exported_global(&mut self, name: &str) -> Option<Result<GlobalValue, String>> {
        let global = self.0.data().instance?.get_global(&mut self.0, name)?;
        Some(match global.get(&mut self.0) {
            Val::I32(v) => Ok(GlobalValue::I32(v)),
            Val::I64(v) => Ok(GlobalValue::I64(v)),
            Val::F32(bits) => Ok(GlobalValue::F32(bits)),
            Val::F64(bits) => Ok(GlobalValue::F64(bits)),
            other => Err(format!(
                "global {name} holds a {:?}, which a snapshot cannot carry",
                other.ty(&self.0)
            )),
        })
    }

    fn set_exported_global(&mut self, name: &str, value: GlobalValue) -> Result<(), String> {
        let global = self
            .0
            .data()
            .instance
            .and_then(|instance| instance.get_global(&mut self.0, name))
            .ok_or_else(|| format!("the module has no global {name}"))?;
        if global.ty(&self.0).mutability() != Mutability::Var {
            return Ok(());
        }
        let val = match value {
            GlobalValue::I32(v) => Val::I32(v),
            GlobalValue::I64(v) => Val::I64(v),
            GlobalValue::F32(bits) => Val::F32(bits),
            GlobalValue::F64(bits) => Val::F64(bits),
        };
        global
            .set(&mut self.0, val)
            .map_err(|e| format!("global {name}: {e:#}"))
    }

    fn grow_memory_to(&mut self, pages: u32) -> Result<(), String> {
        let memory = self.0.data().memory.ok_or("no memory")?;
        let have = memory.size(&self.0);
        if u64::from(pages) > have {
            memory
                .grow(&mut self.0, u64::from(pages) - have)
                .map_err(|e| format!("growing memory to {pages} pages: {e:#}"))?;
        }
        Ok(())
    }
}

/// The store while the guest runs: any thread may take it to run a callback when the guest's
/// `main` is parked.
struct ResidentStore(Store<Data>, Module);

impl Resident for ResidentStore {
    fn enter(&mut self, body: &mut dyn FnMut(&mut dyn GuestCalls)) {
        let mut guest = Guest(self.0.as_context_mut());
        enter(&mut guest, |g| body(g));
    }

    fn initial_memory(&mut self) -> Result<Vec<u8>, String> {
        // A second instance that runs nothing: its memory is the module's initial image.
        let engine = self.1.engine();
        let mut linker = Linker::<()>::new(engine);
        linker
            .define_unknown_imports_as_traps(&self.1)
            .map_err(|e| format!("{e:#}"))?;
        let mut store = Store::new(engine, ());
        store.set_epoch_deadline(u64::MAX / 2);
        let instance = linker
            .instantiate(&mut store, &self.1)
            .map_err(|e| format!("{e:#}"))?;
        let memory = instance
            .get_memory(&mut store, abi::EXPORT_MEMORY)
            .ok_or("the module exports no memory")?;
        Ok(memory.data(&store).to_vec())
    }
}

fn deadline_of(g: &mut Guest<'_>) -> Duration {
    EPOCH_TICK * g.0.data().deadline_ticks as u32
}

/// A fault as wasmtime's error, carried out of the guest's call.
fn host_error(fault: Fault) -> wasmtime::Error {
    wasmtime::Error::new(fault)
}

fn linker(engine: &Engine) -> Linker<Data> {
    let mut linker = Linker::new(engine);
    crate::abi::roslite_imports!(link_roslite[linker, wasmtime::Error]);
    crate::wasi::wasi_functions!(link_wasi[linker, wasmtime::Error]);
    linker
}

pub fn run(
    module: &Module,
    guest: GuestState,
    limits: Limits,
    beginning: crate::migrate::Beginning,
) -> Result<(), Fault> {
    let engine = module.engine();
    let deadline_ticks =
        (limits.deadline.as_nanos().div_ceil(EPOCH_TICK.as_nanos()) as u64).max(1) + 1;
    let shared = guest.shared.clone();
    let data = Data {
        guest,
        instance: None,
        memory: None,
        dispatch: None,
        alloc: None,
        free: None,
        start: None,
        asyncify: None,
        limits: StoreLimitsBuilder::new()
            .memory_size(limits.max_memory_bytes)
            .instances(1)
            .build(),
        deadline_ticks,
    };
    let mut store = Store::new(engine, data);
    store.limiter(|data| &mut data.limits);
    store.epoch_deadline_trap();
    store.set_epoch_deadline(deadline_ticks);
    let instance = linker(engine)
        .instantiate(&mut store, module)
        .map_err(|e| classify(e, "instantiation", limits.deadline))?;
    let abi_error = |what: &str, e: wasmtime::Error| Fault::Abi(format!("{what}: {e:#}"));
    let memory = instance
        .get_memory(&mut store, abi::EXPORT_MEMORY)
        .ok_or_else(|| Fault::Abi(format!("exports no memory named '{}'", abi::EXPORT_MEMORY)))?;
    let dispatch = instance
        .get_typed_func(&mut store, abi::EXPORT_DISPATCH)
        .map_err(|e| abi_error(abi::EXPORT_DISPATCH, e))?;
    let alloc = instance
        .get_typed_func(&mut store, abi::EXPORT_ALLOC)
        .map_err(|e| abi_error(abi::EXPORT_ALLOC, e))?;
    let free = instance
        .get_typed_func(&mut store, abi::EXPORT_FREE)
        .map_err(|e| abi_error(abi::EXPORT_FREE, e))?;
    let start = instance
        .get_typed_func::<(), ()>(&mut store, abi::EXPORT_START)
        .map_err(|e| abi_error(abi::EXPORT_START, e))?;
    let asyncify = AsyncifyFuncs::of(&instance, &mut store);
    let data = store.data_mut();
    data.instance = Some(instance);
    data.memory = Some(memory);
    data.dispatch = Some(dispatch);
    data.alloc = Some(alloc);
    data.free = Some(free);
    data.start = Some(start);
    data.asyncify = asyncify;
    let resident: Arc<Mutex<dyn Resident>> =
        Arc::new(Mutex::new(ResidentStore(store, module.clone())));
    super::run_resident(resident, &shared, beginning)
}

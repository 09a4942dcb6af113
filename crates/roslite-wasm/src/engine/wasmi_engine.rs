//! wasmi: a pure-Rust interpreter, the portable engine and the cross-check of wasmtime; fuel
//! bounds each callback, a store limiter the memory.

use wasmi::{
    AsContextMut, Caller, Config, Engine, Instance, Linker, Memory, Module, Mutability, Store,
    StoreContextMut, StoreLimits, StoreLimitsBuilder, TrapCode, TypedFunc, Val,
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
use std::sync::{Arc, Mutex};

fn engine() -> &'static Engine {
    static ENGINE: std::sync::OnceLock<Engine> = std::sync::OnceLock::new();
    ENGINE.get_or_init(|| {
        let mut config = Config::default();
        config.consume_fuel(true);
        Engine::new(&config)
    })
}

/// Validates and translates `bytes`; what wasmi refuses is a malformed module.
pub fn compile(bytes: &[u8]) -> Result<Module, LoadError> {
    if !bytes.starts_with(b"\0asm") {
        return Err(LoadError::Check(crate::module::ModuleError::Malformed(
            "it does not start with the WebAssembly magic bytes (\\0asm)".into(),
        )));
    }
    let malformed = |e: String| LoadError::Check(crate::module::ModuleError::Malformed(e));
    wasmparser::Validator::new()
        .validate_all(bytes)
        .map_err(|e| malformed(e.to_string()))?;
    Module::new(engine(), &super::instrumented(bytes)?).map_err(|e| malformed(e.to_string()))
}

impl wasmi::errors::HostError for Fault {}

/// `roslite_guest_dispatch`: (slot, kind, a, b, c, d) -> result.
type DispatchFunc = TypedFunc<(i32, i32, i64, i64, i64, i64), i32>;

/// The Asyncify exports of a guest prepared for parking (crate::park).
#[derive(Clone, Copy)]
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
    fuel: u64,
}

struct Guest<'a>(StoreContextMut<'a, Data>);

fn classify(error: wasmi::Error, during: &str, fuel: u64) -> Fault {
    if let Some(fault) = error.downcast_ref::<Fault>() {
        return fault.clone();
    }
    match error.as_trap_code() {
        Some(TrapCode::OutOfFuel) => Fault::Deadline {
            during: during.to_owned(),
            limit: format!("fuel of {fuel} (--fuel)"),
        },
        _ => Fault::Trap {
            during: during.to_owned(),
            message: error.to_string(),
        },
    }
}

impl Guest<'_> {
    fn renew_budget(&mut self) -> u64 {
        let fuel = self.0.data().fuel;
        self.0.set_fuel(fuel).expect("fuel is on");
        fuel
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
        let f = self.0.data().alloc.expect("checked at load");
        let fuel = self.renew_budget();
        f.call(&mut self.0, size as i32)
            .map(|at| at as u32)
            .map_err(|e| classify(e, abi::EXPORT_ALLOC, fuel))
    }

    fn free(&mut self, pointer: u32) -> Result<(), Fault> {
        let f = self.0.data().free.expect("checked at load");
        let fuel = self.renew_budget();
        f.call(&mut self.0, pointer as i32)
            .map_err(|e| classify(e, abi::EXPORT_FREE, fuel))
    }

    fn dispatch(
        &mut self,
        slot: i32,
        kind: CallbackKind,
        [a, b, c, d]: [i64; 4],
        during: &str,
    ) -> Result<i32, Fault> {
        let f = self.0.data().dispatch.expect("checked at load");
        let fuel = self.renew_budget();
        self.0.data_mut().guest.enter_callback();
        let result = f.call(&mut self.0, (slot, kind as i32, a, b, c, d));
        self.0.data_mut().guest.leave_callback();
        result.map_err(|e| classify(e, during, fuel))
    }

    fn start(&mut self) -> Result<(), Fault> {
        let f = self.0.data().start.expect("checked at load");
        let fuel = self.renew_budget();
        f.call(&mut self.0, ())
            .map_err(|e| classify(e, "main", fuel))
    }

    fn asyncify(&mut self, call: Asyncify) -> Result<(), Fault> {
        let Some(f) = self.0.data().asyncify else {
            return Err(Fault::Abi(format!(
                "the guest does not export {}",
                call.export()
            )));
        };
        let fuel = self.0.data().fuel;
        let result = match call {
            Asyncify::StartUnwind(at) => f.start_unwind.call(&mut self.0, at as i32),
            Asyncify::StartRewind(at) => f.start_rewind.call(&mut self.0, at as i32),
            Asyncify::StopUnwind => f.stop_unwind.call(&mut self.0, ()),
            Asyncify::StopRewind => f.stop_rewind.call(&mut self.0, ()),
        };
        result.map_err(|e| classify(e, call.export(), fuel))
    }

    fn can_park(&mut self) -> bool {
        self.can_park_at_all() && self.0.data().guest.dispatching == 0
    }

    fn can_park_at_all(&mut self) -> bool {
        self.0.data().asyncify.is_some()
    }

    fn exported_global(&mut self, name: &str) -> Option<Result<GlobalValue, String>> {
        let global = self.0.data().instance?.get_global(&self.0, name)?;
        Some(match global.get(&self.0) {
            Val::I32(v) => Ok(GlobalValue::I32(v)),
            Val::I64(v) => Ok(GlobalValue::I64(v)),
            Val::F32(v) => Ok(GlobalValue::F32(v.to_bits())),
            Val::F64(v) => Ok(GlobalValue::F64(v.to_bits())),
            other => Err(format!(
                "global {name} holds a {:?}, which a snapshot cannot carry",
                other.ty()
            )),
        })
    }

    fn set_exported_global(&mut self, name: &str, value: GlobalValue) -> Result<(), String> {
        let global = self
            .0
            .data()
            .instance
            .and_then(|instance| instance.get_global(&self.0, name))
            .ok_or_else(|| format!("the module has no global {name}"))?;
        if global.ty(&self.0).mutability() != Mutability::Var {
            return Ok(());
        }
        let val = match value {
            GlobalValue::I32(v) => Val::I32(v),
            GlobalValue::I64(v) => Val::I64(v),
            GlobalValue::F32(bits) => Val::F32(wasmi::F32::from_bits(bits)),
            GlobalValue::F64(bits) => Val::F64(wasmi::F64::from_bits(bits)),
        };
        global
            .set(&mut self.0, val)
            .map_err(|e| format!("global {name}: {e}"))
    }

    fn grow_memory_to(&mut self, pages: u32) -> Result<(), String> {
        let memory = self.0.data().memory.ok_or("no memory")?;
        let have = memory.size(&self.0);
        if u64::from(pages) > have {
            memory
                .grow(&mut self.0, u64::from(pages) - have)
                .map_err(|e| format!("growing memory to {pages} pages: {e}"))?;
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
        for import in self.1.imports() {
            if let wasmi::ExternType::Func(ty) = import.ty() {
                linker
                    .func_new(import.module(), import.name(), ty.clone(), |_, _, _| {
                        Err(wasmi::Error::new(
                            "an import called while reading the initial image",
                        ))
                    })
                    .map_err(|e| e.to_string())?;
            }
        }
        let mut store = Store::new(engine, ());
        store.set_fuel(u64::MAX / 2).map_err(|e| e.to_string())?;
        let instance = linker
            .instantiate_and_start(&mut store, &self.1)
            .map_err(|e| e.to_string())?;
        let memory = instance
            .get_memory(&store, abi::EXPORT_MEMORY)
            .ok_or("the module exports no memory")?;
        Ok(memory.data(&store).to_vec())
    }
}

/// A fault as wasmi's error, carried out of the guest's call.
fn host_error(fault: Fault) -> wasmi::Error {
    wasmi::Error::host(fault)
}

fn linker(engine: &Engine) -> Linker<Data> {
    let mut linker = Linker::new(engine);
    crate::abi::roslite_imports!(link_roslite[linker, wasmi::Error]);
    crate::wasi::wasi_functions!(link_wasi[linker, wasmi::Error]);
    linker
}

pub fn run(
    module: &Module,
    guest: GuestState,
    limits: Limits,
    beginning: crate::migrate::Beginning,
) -> Result<(), Fault> {
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
        fuel: limits.fuel,
    };
    let mut store = Store::new(module.engine(), data);
    store.limiter(|data| &mut data.limits);
    store.set_fuel(limits.fuel).expect("fuel is on");
    let instance = linker(module.engine())
        .instantiate_and_start(&mut store, module)
        .map_err(|e| classify(e, "instantiation", limits.fuel))?;
    let abi_error = |what: &str, e: wasmi::Error| Fault::Abi(format!("{what}: {e}"));
    let memory = instance
        .get_memory(&store, abi::EXPORT_MEMORY)
        .ok_or_else(|| Fault::Abi(format!("exports no memory named '{}'", abi::EXPORT_MEMORY)))?;
    let dispatch = instance
        .get_typed_func(&store, abi::EXPORT_DISPATCH)
        .map_err(|e| abi_error(abi::EXPORT_DISPATCH, e))?;
    let alloc = instance
        .get_typed_func(&store, abi::EXPORT_ALLOC)
        .map_err(|e| abi_error(abi::EXPORT_ALLOC, e))?;
    let free = instance
        .get_typed_func(&store, abi::EXPORT_FREE)
        .map_err(|e| abi_error(abi::EXPORT_FREE, e))?;
    let start = instance
        .get_typed_func::<(), ()>(&store, abi::EXPORT_START)
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

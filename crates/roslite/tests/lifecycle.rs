//! Managed (lifecycle) nodes in one process: transitions and their callbacks, the events they
//! publish, lifecycle publishers, and the five services `ros2 lifecycle` uses.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use roslite::lifecycle::{
    CallbackReturn, LifecycleCallbacks, LifecycleError, LifecycleNode, LifecyclePublisher,
    LifecycleState, TransitionOutcome, TransitionRequest,
};
use roslite::msgs::lifecycle_msgs::msg::{Transition, TransitionEvent};
use roslite::msgs::lifecycle_msgs::srv::{
    ChangeState, ChangeState_Request, GetAvailableStates, GetAvailableStates_Request,
    GetAvailableTransitions, GetAvailableTransitions_Request, GetState, GetState_Request,
};
use roslite::msgs::std_msgs::msg::String as StringMsg;
use roslite::{Context, ContextOptions, Executor, NetworkMode};

use LifecycleState::{Active, Finalized, Inactive, Unconfigured};

mod common;

fn offline() -> Context {
    Context::new(ContextOptions {
        network: NetworkMode::Off,
        ..Default::default()
    })
    .unwrap()
}

type Log = Arc<Mutex<Vec<(String, LifecycleState)>>>;

/// Callbacks that record each call and answer from a script (success when it runs out); the
/// publisher `on_configure` creates is shared with the test.
#[derive(Default)]
struct Scripted {
    log: Log,
    answers: Vec<(&'static str, CallbackReturn)>,
    panic_in: Option<&'static str>,
    publisher: Arc<Mutex<Option<LifecyclePublisher<StringMsg>>>>,
    publish_in_on_activate: bool,
    nested: Arc<Mutex<Option<Result<TransitionOutcome, LifecycleError>>>>,
}

impl Scripted {
    fn answer(&mut self, name: &'static str, previous: LifecycleState) -> CallbackReturn {
        self.log.lock().unwrap().push((name.to_owned(), previous));
        if self.panic_in == Some(name) {
            panic!("the {name} test panic");
        }
        match self.answers.iter().position(|(n, _)| *n == name) {
            Some(i) => self.answers.remove(i).1,
            None => CallbackReturn::Success,
        }
    }
}

impl LifecycleCallbacks for Scripted {
    fn on_configure(&mut self, node: &LifecycleNode, previous: LifecycleState) -> CallbackReturn {
        *self.publisher.lock().unwrap() = Some(node.create_publisher("chatter", 10).unwrap());
        if self.nested.lock().unwrap().is_none() {
            *self.nested.lock().unwrap() = Some(node.activate());
        }
        assert_eq!(node.current_state(), LifecycleState::Configuring);
        self.answer("on_configure", previous)
    }
    fn on_cleanup(&mut self, _: &LifecycleNode, previous: LifecycleState) -> CallbackReturn {
        *self.publisher.lock().unwrap() = None;
        self.answer("on_cleanup", previous)
    }
    fn on_activate(&mut self, _: &LifecycleNode, previous: LifecycleState) -> CallbackReturn {
        if self.publish_in_on_activate {
            let publisher = self.publisher.lock().unwrap();
            let publisher = publisher.as_ref().unwrap();
            assert!(
                publisher.is_activated(),
                "activated before on_activate runs"
            );
            publisher
                .publish(StringMsg {
                    data: "from on_activate".into(),
                })
                .unwrap();
        }
        self.answer("on_activate", previous)
    }
    fn on_deactivate(&mut self, _: &LifecycleNode, previous: LifecycleState) -> CallbackReturn {
        self.answer("on_deactivate", previous)
    }
    fn on_shutdown(&mut self, _: &LifecycleNode, previous: LifecycleState) -> CallbackReturn {
        self.answer("on_shutdown", previous)
    }
    fn on_error(&mut self, _: &LifecycleNode, previous: LifecycleState) -> CallbackReturn {
        self.answer("on_error", previous)
    }
}

fn outcome(state: LifecycleState, result: CallbackReturn) -> TransitionOutcome {
    TransitionOutcome { state, result }
}

#[test]
fn callbacks_run_in_order_and_every_step_is_published() {
    let ctx = offline();
    let log = Log::default();
    let node = LifecycleNode::new(
        ctx.create_node("managed").unwrap(),
        Scripted {
            log: log.clone(),
            ..Default::default()
        },
    )
    .unwrap();
    let watcher = ctx.create_node("watcher").unwrap();
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    let _sub = watcher
        .create_subscription(
            "/managed/transition_event",
            100,
            move |e: TransitionEvent| sink.lock().unwrap().push(e),
        )
        .unwrap();
    assert_eq!(node.current_state(), Unconfigured);
    let ok = CallbackReturn::Success;
    assert_eq!(node.configure().unwrap(), outcome(Inactive, ok));
    assert_eq!(node.activate().unwrap(), outcome(Active, ok));
    assert_eq!(node.deactivate().unwrap(), outcome(Inactive, ok));
    assert_eq!(node.cleanup().unwrap(), outcome(Unconfigured, ok));
    assert_eq!(node.shutdown().unwrap(), outcome(Finalized, ok));
    let calls: Vec<(String, LifecycleState)> = log.lock().unwrap().clone();
    let expected = [
        ("on_configure", Unconfigured),
        ("on_activate", Inactive),
        ("on_deactivate", Active),
        ("on_cleanup", Inactive),
        ("on_shutdown", Unconfigured),
    ];
    assert_eq!(
        calls,
        expected.map(|(n, s)| (n.to_owned(), s)).to_vec(),
        "each callback once, with the state its transition started from"
    );
    let executor = Executor::new(&ctx);
    executor.add_node(&watcher);
    assert!(common::spin_until(
        &executor,
        Duration::from_secs(5),
        || { events.lock().unwrap().len() >= 10 }
    ));
    let steps: Vec<(u8, &str, String, String)> = events
        .lock()
        .unwrap()
        .iter()
        .map(|e| {
            assert!(e.timestamp > 0, "stamped with the node's clock");
            (
                e.transition.id,
                leak(&e.transition.label),
                e.start_state.label.clone(),
                e.goal_state.label.clone(),
            )
        })
        .collect();
    let expected: Vec<(u8, &str, String, String)> = [
        (1, "configure", "unconfigured", "configuring"),
        (10, "transition_success", "configuring", "inactive"),
        (3, "activate", "inactive", "activating"),
        (30, "transition_success", "activating", "active"),
        (4, "deactivate", "active", "deactivating"),
        (40, "transition_success", "deactivating", "inactive"),
        (2, "cleanup", "inactive", "cleaningup"),
        (20, "transition_success", "cleaningup", "unconfigured"),
        (5, "shutdown", "unconfigured", "shuttingdown"),
        (50, "transition_success", "shuttingdown", "finalized"),
    ]
    .into_iter()
    .map(|(id, l, s, g)| (id, l, s.to_owned(), g.to_owned()))
    .collect();
    assert_eq!(steps, expected);
    // Nothing leaves finalized, and the error says so.
    let err = node.configure().unwrap_err();
    assert!(
        err.to_string().contains("no transition leaves 'finalized'"),
        "{err}"
    );
}

fn leak(s: &str) -> &'static str {
    Box::leak(s.to_owned().into_boxed_str())
}

#[test]
fn a_lifecycle_publisher_sends_only_while_its_node_is_active() {
    let ctx = offline();
    let publisher = Arc::new(Mutex::new(None));
    let node = LifecycleNode::new(
        ctx.create_node("talker").unwrap(),
        Scripted {
            publisher: publisher.clone(),
            publish_in_on_activate: true,
            ..Default::default()
        },
    )
    .unwrap();
    let listener = ctx.create_node("listener").unwrap();
    let heard = Arc::new(Mutex::new(Vec::new()));
    let sink = heard.clone();
    let _sub = listener
        .create_subscription("/chatter", 100, move |m: StringMsg| {
            sink.lock().unwrap().push(m.data)
        })
        .unwrap();
    let executor = Executor::new(&ctx);
    executor.add_node(&listener);
    let say = |text: &str| {
        let publisher = publisher.lock().unwrap().clone().unwrap();
        publisher.publish(StringMsg { data: text.into() }).unwrap();
        executor.spin_some();
    };
    node.configure().unwrap();
    say("while inactive");
    node.activate().unwrap();
    say("while active");
    node.deactivate().unwrap();
    say("after deactivation");
    node.activate().unwrap();
    say("active again");
    executor.spin_some();
    assert_eq!(
        *heard.lock().unwrap(),
        [
            "from on_activate",
            "while active",
            "from on_activate",
            "active again"
        ]
    );
    // A publisher made while the node is active starts activated.
    let late: LifecyclePublisher<StringMsg> = node.create_publisher("late", 10).unwrap();
    assert!(late.is_activated());
    node.shutdown().unwrap();
    assert!(
        !late.is_activated(),
        "a finalized node's publishers are deactivated"
    );
    assert!(!publisher.lock().unwrap().as_ref().unwrap().is_activated());
}

#[test]
fn failing_erring_and_panicking_callbacks_decide_where_the_node_goes() {
    use CallbackReturn::{Error, Failure, Success};
    let ctx = offline();
    let log = Log::default();
    let node = LifecycleNode::new(
        ctx.create_node("fragile").unwrap(),
        Scripted {
            log: log.clone(),
            answers: vec![
                ("on_configure", Failure),
                ("on_configure", Success),
                ("on_configure", Error),
                ("on_error", Success),
                ("on_error", Failure),
            ],
            panic_in: Some("on_activate"),
            ..Default::default()
        },
    )
    .unwrap();
    // A failure goes back to where the transition started.
    assert_eq!(node.configure().unwrap(), outcome(Unconfigured, Failure));
    assert_eq!(node.configure().unwrap(), outcome(Inactive, Success));
    // A panic is an error; on_error succeeding leads to unconfigured.
    assert_eq!(node.activate().unwrap(), outcome(Unconfigured, Error));
    // An error whose handling fails finalizes the node.
    assert_eq!(node.configure().unwrap(), outcome(Finalized, Error));
    let calls: Vec<(String, LifecycleState)> = log.lock().unwrap().clone();
    let expected = [
        ("on_configure", Unconfigured),
        ("on_configure", Unconfigured),
        ("on_activate", Inactive),
        ("on_error", Inactive),
        ("on_configure", Unconfigured),
        ("on_error", Unconfigured),
    ];
    assert_eq!(calls, expected.map(|(n, s)| (n.to_owned(), s)).to_vec());
}

#[test]
fn a_transition_asked_for_inside_a_callback_is_refused() {
    let ctx = offline();
    let nested = Arc::new(Mutex::new(None));
    let node = LifecycleNode::new(
        ctx.create_node("eager").unwrap(),
        Scripted {
            nested: nested.clone(),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(node.configure().unwrap().state, Inactive);
    let refused = nested.lock().unwrap().take().unwrap().unwrap_err();
    assert_eq!(
        refused,
        LifecycleError::TransitionInProgress {
            state: LifecycleState::Configuring
        }
    );
    assert!(
        refused.to_string().contains("ask again once it has ended"),
        "{refused}"
    );
}

#[test]
fn the_five_services_manage_the_node_as_ros2_lifecycle_does() {
    let ctx = offline();
    let managed = LifecycleNode::new(
        ctx.create_node_with_namespace("camera", "/robot").unwrap(),
        (),
    )
    .unwrap();
    let tool = ctx.create_node("tool").unwrap();
    let change = tool
        .create_client::<ChangeState>("/robot/camera/change_state")
        .unwrap();
    let get = tool
        .create_client::<GetState>("/robot/camera/get_state")
        .unwrap();
    let transitions = tool
        .create_client::<GetAvailableTransitions>("/robot/camera/get_available_transitions")
        .unwrap();
    let graph = tool
        .create_client::<GetAvailableTransitions>("/robot/camera/get_transition_graph")
        .unwrap();
    let states = tool
        .create_client::<GetAvailableStates>("/robot/camera/get_available_states")
        .unwrap();
    let spinner = common::spin_in_background(&ctx, &managed);
    let limit = Duration::from_secs(5);
    let state = || {
        let s = get
            .call(GetState_Request::default(), limit)
            .unwrap()
            .current_state;
        (s.id, s.label)
    };
    let set = |id: u8, label: &str| {
        change
            .call(
                ChangeState_Request {
                    transition: Transition {
                        id,
                        label: label.into(),
                    },
                },
                limit,
            )
            .unwrap()
            .success
    };
    assert_eq!(state(), (1, "unconfigured".to_owned()));
    // A label wins over the id, which a request leaves 0 when it names a label.
    assert!(set(0, "configure"));
    assert_eq!(state(), (2, "inactive".to_owned()));
    let available: Vec<(u8, String, String)> = transitions
        .call(GetAvailableTransitions_Request::default(), limit)
        .unwrap()
        .available_transitions
        .into_iter()
        .map(|t| (t.transition.id, t.transition.label, t.goal_state.label))
        .collect();
    assert_eq!(
        available,
        [
            (2, "cleanup".to_owned(), "cleaningup".to_owned()),
            (3, "activate".to_owned(), "activating".to_owned()),
            (6, "shutdown".to_owned(), "shuttingdown".to_owned()),
        ]
    );
    assert!(set(3, ""));
    assert_eq!(state(), (3, "active".to_owned()));
    // Not from active: refused, and the node stays.
    assert!(!set(2, ""));
    assert!(!set(0, "configure"));
    assert_eq!(state(), (3, "active".to_owned()));
    let all = graph
        .call(GetAvailableTransitions_Request::default(), limit)
        .unwrap()
        .available_transitions;
    assert_eq!(all.len(), 25);
    assert_eq!((all[0].transition.id, all[24].transition.id), (1, 62));
    let every: Vec<u8> = states
        .call(GetAvailableStates_Request::default(), limit)
        .unwrap()
        .available_states
        .iter()
        .map(|s| s.id)
        .collect();
    assert_eq!(every, [0, 1, 2, 3, 4, 10, 11, 12, 13, 14, 15]);
    assert!(set(0, "shutdown"));
    assert_eq!(state(), (4, "finalized".to_owned()));
    assert_eq!(managed.current_state(), Finalized);
    ctx.shutdown();
    spinner.join().unwrap();
}

#[test]
fn dropping_a_node_that_is_not_finalized_shuts_it_down() {
    let ctx = offline();
    let log = Log::default();
    let node = LifecycleNode::new(
        ctx.create_node("tidy").unwrap(),
        Scripted {
            log: log.clone(),
            ..Default::default()
        },
    )
    .unwrap();
    node.configure().unwrap();
    drop(node);
    assert_eq!(
        log.lock().unwrap().last().unwrap(),
        &("on_shutdown".to_owned(), Inactive)
    );
    // Not once its context has shut down: there is no graph left to tell.
    let log = Log::default();
    let node = LifecycleNode::new(
        ctx.create_node("late").unwrap(),
        Scripted {
            log: log.clone(),
            ..Default::default()
        },
    )
    .unwrap();
    ctx.shutdown();
    drop(node);
    assert!(log.lock().unwrap().is_empty());
    // By id, shutdown from inactive is 6; from unconfigured, 6 is no transition.
    let ctx = offline();
    let node = LifecycleNode::new(ctx.create_node("byid").unwrap(), ()).unwrap();
    assert!(matches!(
        node.trigger(&TransitionRequest::Id(6)),
        Err(LifecycleError::InvalidTransition { .. })
    ));
    assert_eq!(
        node.trigger(&TransitionRequest::Id(5)).unwrap().state,
        Finalized
    );
}

//! The default lifecycle state machine of ROS 2 managed nodes, without any I/O: its states,
//! its transitions, and which transition may start from which state.
//!
//! The states, transitions, their ids and labels are those of the managed-nodes design
//! (design.ros2.org, "Managed nodes") as `lifecycle_msgs/msg/State` and `Transition` number
//! them and as rcl_lifecycle's default state machine registers them: the same labels, and the
//! same order, which is what `get_available_states` and `get_transition_graph` answer in and
//! what `ros2 lifecycle list` prints.

use std::fmt;

/// A state of a managed node: four primary states a node rests in (and `Unknown`), and six
/// transition states it passes through while a transition's callback runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum LifecycleState {
    Unknown = 0,
    Unconfigured = 1,
    Inactive = 2,
    Active = 3,
    Finalized = 4,
    Configuring = 10,
    CleaningUp = 11,
    ShuttingDown = 12,
    Activating = 13,
    Deactivating = 14,
    ErrorProcessing = 15,
}

impl LifecycleState {
    /// Every state, in the order rcl_lifecycle registers them (`get_available_states`).
    pub const ALL: [Self; 11] = [
        Self::Unknown,
        Self::Unconfigured,
        Self::Inactive,
        Self::Active,
        Self::Finalized,
        Self::Configuring,
        Self::CleaningUp,
        Self::ShuttingDown,
        Self::Activating,
        Self::Deactivating,
        Self::ErrorProcessing,
    ];

    /// The `lifecycle_msgs/msg/State` id.
    pub fn id(self) -> u8 {
        self as u8
    }

    /// The label `ros2 lifecycle get` prints (`unconfigured`, `errorprocessing`).
    pub fn label(self) -> &'static str {
        match self {
            Self::Unknown => "unknown",
            Self::Unconfigured => "unconfigured",
            Self::Inactive => "inactive",
            Self::Active => "active",
            Self::Finalized => "finalized",
            Self::Configuring => "configuring",
            Self::CleaningUp => "cleaningup",
            Self::ShuttingDown => "shuttingdown",
            Self::Activating => "activating",
            Self::Deactivating => "deactivating",
            Self::ErrorProcessing => "errorprocessing",
        }
    }

    /// The state with `lifecycle_msgs/msg/State` id `id`.
    pub fn from_id(id: u8) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.id() == id)
    }

    /// Whether a node rests in this state (ids below 10), rather than passing through it.
    pub fn is_primary(self) -> bool {
        self.id() < Self::Configuring.id()
    }
}

impl fmt::Display for LifecycleState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// What a transition's callback answers: the transition succeeds, fails (the node goes back
/// where it came from), or meets an error (the node goes to `errorprocessing`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallbackReturn {
    Success,
    Failure,
    Error,
}

impl CallbackReturn {
    /// The label of the transition that leaves a transition state with this result.
    fn label(self) -> &'static str {
        match self {
            Self::Success => "transition_success",
            Self::Failure => "transition_failure",
            Self::Error => "transition_error",
        }
    }

    /// The `lifecycle_msgs/msg/Transition` `TRANSITION_CALLBACK_*` id.
    pub fn id(self) -> u8 {
        match self {
            Self::Success => 97,
            Self::Failure => 98,
            Self::Error => 99,
        }
    }
}

/// One edge of the state machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TransitionDescription {
    /// The `lifecycle_msgs/msg/Transition` id (`TRANSITION_CONFIGURE` = 1, ...).
    pub id: u8,
    pub label: &'static str,
    pub start: LifecycleState,
    pub goal: LifecycleState,
}

const fn edge(
    id: u8,
    label: &'static str,
    start: LifecycleState,
    goal: LifecycleState,
) -> TransitionDescription {
    TransitionDescription {
        id,
        label,
        start,
        goal,
    }
}

use LifecycleState::{
    Activating, Active, CleaningUp, Configuring, Deactivating, ErrorProcessing, Finalized,
    Inactive, ShuttingDown, Unconfigured,
};

/// Every transition, in the order rcl_lifecycle registers them (`get_transition_graph`). A
/// primary state's valid transitions are those starting from it, in this order.
pub const TRANSITION_GRAPH: [TransitionDescription; 25] = [
    edge(1, "configure", Unconfigured, Configuring),
    edge(10, "transition_success", Configuring, Inactive),
    edge(11, "transition_failure", Configuring, Unconfigured),
    edge(12, "transition_error", Configuring, ErrorProcessing),
    edge(2, "cleanup", Inactive, CleaningUp),
    edge(20, "transition_success", CleaningUp, Unconfigured),
    edge(21, "transition_failure", CleaningUp, Inactive),
    edge(22, "transition_error", CleaningUp, ErrorProcessing),
    edge(3, "activate", Inactive, Activating),
    edge(30, "transition_success", Activating, Active),
    edge(31, "transition_failure", Activating, Inactive),
    edge(32, "transition_error", Activating, ErrorProcessing),
    edge(4, "deactivate", Active, Deactivating),
    edge(40, "transition_success", Deactivating, Inactive),
    edge(41, "transition_failure", Deactivating, Active),
    edge(42, "transition_error", Deactivating, ErrorProcessing),
    edge(5, "shutdown", Unconfigured, ShuttingDown),
    edge(6, "shutdown", Inactive, ShuttingDown),
    edge(7, "shutdown", Active, ShuttingDown),
    edge(50, "transition_success", ShuttingDown, Finalized),
    edge(51, "transition_failure", ShuttingDown, Finalized),
    edge(52, "transition_error", ShuttingDown, ErrorProcessing),
    edge(60, "transition_success", ErrorProcessing, Unconfigured),
    edge(61, "transition_failure", ErrorProcessing, Finalized),
    edge(62, "transition_error", ErrorProcessing, Finalized),
];

/// The transitions that may start from `state`, in graph order.
pub fn transitions_from(
    state: LifecycleState,
) -> impl Iterator<Item = &'static TransitionDescription> {
    TRANSITION_GRAPH.iter().filter(move |t| t.start == state)
}

/// How a transition was asked for: by its id or by its label (`ros2 lifecycle set` sends the
/// label; a label wins over an id, as in rclcpp, because a service request's id defaults to 0).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TransitionRequest {
    Id(u8),
    Label(String),
}

impl TransitionRequest {
    /// The request a `lifecycle_msgs/msg/Transition` makes.
    pub fn from_msg(id: u8, label: &str) -> Self {
        if label.is_empty() {
            Self::Id(id)
        } else {
            Self::Label(label.to_owned())
        }
    }
}

impl fmt::Display for TransitionRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Id(id) => write!(f, "{id}"),
            Self::Label(label) => write!(f, "'{label}'"),
        }
    }
}

/// Why a transition could not start.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LifecycleError {
    /// No transition of that id or label starts from the node's state.
    InvalidTransition {
        requested: TransitionRequest,
        state: LifecycleState,
    },
    /// Another transition's callback is still running (a transition was asked for from
    /// inside one, or from another thread meanwhile).
    TransitionInProgress { state: LifecycleState },
}

impl fmt::Display for LifecycleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidTransition { requested, state } => {
                write!(
                    f,
                    "transition {requested} cannot start from state '{state}'; "
                )?;
                let valid: Vec<String> = transitions_from(*state)
                    .map(|t| format!("'{}' [{}]", t.label, t.id))
                    .collect();
                if valid.is_empty() {
                    write!(f, "no transition leaves '{state}'")
                } else {
                    write!(f, "valid ones are {}", valid.join(", "))
                }
            }
            Self::TransitionInProgress { state } => write!(
                f,
                "a transition is in progress (state '{state}'); ask again once it has ended"
            ),
        }
    }
}

impl std::error::Error for LifecycleError {}

/// The state machine's position: where the node is, and where its running transition began.
#[derive(Debug)]
pub struct Machine {
    current: LifecycleState,
    /// The primary state the running transition started from, while one runs.
    started_from: Option<LifecycleState>,
}

impl Default for Machine {
    fn default() -> Self {
        Self::new()
    }
}

impl Machine {
    /// A machine in `unconfigured`, where every managed node starts.
    pub fn new() -> Self {
        Self {
            current: Unconfigured,
            started_from: None,
        }
    }

    pub fn current(&self) -> LifecycleState {
        self.current
    }

    /// Starts `requested` from the current primary state: the machine moves to the
    /// transition's state (whose callback the caller then runs).
    ///
    /// # Errors
    /// [`LifecycleError`] if a transition is running or `requested` does not start here.
    pub fn start(
        &mut self,
        requested: &TransitionRequest,
    ) -> Result<&'static TransitionDescription, LifecycleError> {
        if self.started_from.is_some() {
            return Err(LifecycleError::TransitionInProgress {
                state: self.current,
            });
        }
        let found = transitions_from(self.current).find(|t| match requested {
            TransitionRequest::Id(id) => t.id == *id,
            TransitionRequest::Label(label) => t.label == label,
        });
        let transition = found.ok_or_else(|| LifecycleError::InvalidTransition {
            requested: requested.clone(),
            state: self.current,
        })?;
        self.started_from = Some(self.current);
        self.current = transition.goal;
        Ok(transition)
    }

    /// Leaves the current transition state as its callback's `result` says. Where that leads
    /// to `errorprocessing`, the caller runs the error callback and finishes again.
    ///
    /// # Panics
    /// If no transition is running (an internal bug: callers pair it with `start`).
    pub fn finish(&mut self, result: CallbackReturn) -> &'static TransitionDescription {
        assert!(
            self.started_from.is_some(),
            "internal bug: finishing a lifecycle transition that was not started"
        );
        let transition = transitions_from(self.current)
            .find(|t| t.label == result.label())
            .expect("internal bug: every transition state has a success, failure and error edge");
        self.current = transition.goal;
        if self.current.is_primary() {
            self.started_from = None;
        }
        transition
    }

    /// The primary state the running transition started from.
    pub fn started_from(&self) -> Option<LifecycleState> {
        self.started_from
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `transition` from `machine`'s state with each callback answering in turn from
    /// `results`; the primary state reached.
    fn run(machine: &mut Machine, transition: &str, results: &[CallbackReturn]) -> LifecycleState {
        machine
            .start(&TransitionRequest::Label(transition.into()))
            .unwrap();
        let mut results = results.iter();
        while !machine.current().is_primary() {
            machine.finish(*results.next().expect("a result for each callback"));
        }
        assert!(results.next().is_none(), "a callback result was not used");
        machine.current()
    }

    #[test]
    fn the_happy_path_goes_round_the_design_diagram() {
        use CallbackReturn::Success;
        let mut m = Machine::new();
        assert_eq!(m.current(), Unconfigured);
        assert_eq!(run(&mut m, "configure", &[Success]), Inactive);
        assert_eq!(run(&mut m, "activate", &[Success]), Active);
        assert_eq!(run(&mut m, "deactivate", &[Success]), Inactive);
        assert_eq!(run(&mut m, "cleanup", &[Success]), Unconfigured);
        assert_eq!(run(&mut m, "shutdown", &[Success]), Finalized);
        assert_eq!(transitions_from(Finalized).count(), 0);
    }

    #[test]
    fn a_failure_returns_to_the_start_and_an_error_goes_through_errorprocessing() {
        use CallbackReturn::{Error, Failure, Success};
        let mut m = Machine::new();
        assert_eq!(run(&mut m, "configure", &[Failure]), Unconfigured);
        assert_eq!(run(&mut m, "configure", &[Success]), Inactive);
        assert_eq!(run(&mut m, "activate", &[Failure]), Inactive);
        assert_eq!(run(&mut m, "activate", &[Success]), Active);
        assert_eq!(run(&mut m, "deactivate", &[Failure]), Active);
        // An error, then error handling that succeeds: back to unconfigured.
        assert_eq!(run(&mut m, "deactivate", &[Error, Success]), Unconfigured);
        // An error whose handling fails or errs: finalized.
        let mut m = Machine::new();
        assert_eq!(run(&mut m, "configure", &[Error, Failure]), Finalized);
        let mut m = Machine::new();
        assert_eq!(run(&mut m, "shutdown", &[Error, Error]), Finalized);
        let mut m = Machine::new();
        assert_eq!(run(&mut m, "shutdown", &[Failure]), Finalized);
    }

    #[test]
    fn transitions_are_found_by_id_or_label_from_their_own_state_only() {
        let mut m = Machine::new();
        let err = m.start(&TransitionRequest::Id(3)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "transition 3 cannot start from state 'unconfigured'; valid ones are \
             'configure' [1], 'shutdown' [5]"
        );
        // Shutdown has an id per state: 5 from unconfigured, 6 from inactive, 7 from active.
        assert!(m.start(&TransitionRequest::Id(6)).is_err());
        let t = m
            .start(&TransitionRequest::Label("shutdown".into()))
            .unwrap();
        assert_eq!((t.id, t.goal), (5, ShuttingDown));
        // While its callback runs, nothing else starts.
        assert_eq!(
            m.start(&TransitionRequest::Id(1)),
            Err(LifecycleError::TransitionInProgress {
                state: ShuttingDown
            })
        );
        assert_eq!(m.started_from(), Some(Unconfigured));
        m.finish(CallbackReturn::Success);
        assert_eq!(m.started_from(), None);
        let err = m
            .start(&TransitionRequest::Label("configure".into()))
            .unwrap_err();
        assert!(
            err.to_string()
                .ends_with("no transition leaves 'finalized'"),
            "{err}"
        );
    }

    #[test]
    fn the_graph_has_every_state_and_each_transition_state_leaves_three_ways() {
        for state in LifecycleState::ALL {
            assert_eq!(LifecycleState::from_id(state.id()), Some(state));
            let out: Vec<&str> = transitions_from(state).map(|t| t.label).collect();
            if state.is_primary() {
                assert!(out.iter().all(|l| !l.starts_with("transition_")), "{state}");
            } else {
                assert_eq!(
                    out,
                    [
                        "transition_success",
                        "transition_failure",
                        "transition_error"
                    ],
                    "{state}"
                );
            }
        }
        assert_eq!(LifecycleState::from_id(5), None);
        let primary_ids: Vec<u8> = TRANSITION_GRAPH
            .iter()
            .filter(|t| t.start.is_primary())
            .map(|t| t.id)
            .collect();
        assert_eq!(primary_ids, [1, 2, 3, 4, 5, 6, 7]);
    }
}

//! The test action: a `test_msgs/action/Fibonacci` server whose goals say what it does, and
//! the checks a client runs against it (the rclpy peer, `interop/python/action_peer.py`,
//! serves and checks the same way).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use roslite::action::{ActionError, GoalResponse, ServerGoalHandle, WrappedResult};
use roslite::msgs::action_msgs::srv::CancelGoal_Response;
use roslite::msgs::test_msgs::action::{Fibonacci, Fibonacci_Goal, Fibonacci_Result};
use roslite::{ActionClient, ActionServer, CancelResponse, GoalStatusCode, Node};

/// Long enough for anything that works; the tests wait for events, never for time.
pub const PATIENCE: Duration = Duration::from_secs(30);
/// A goal the test server executes until a cancel request comes.
pub const UNTIL_CANCELED: i32 = 1000;
/// A goal the test server holds until the server goes away.
pub const HOLD: i32 = 2000;

/// The sequence `order` Fibonacci steps long, from `[0, 1]`.
pub fn fibonacci(order: i32) -> Vec<i32> {
    let mut sequence = vec![0, 1];
    for i in 1..order.max(1) as usize {
        sequence.push(sequence[i] + sequence[i - 1]);
    }
    sequence
}

/// The test server: rejects negative orders; executes each goal on a thread of its own,
/// publishing the sequence after every step.
pub fn fibonacci_server(node: &Node) -> ActionServer<Fibonacci> {
    node.create_action_server::<Fibonacci>(
        "fibonacci",
        |_, goal| {
            if goal.order < 0 {
                GoalResponse::Reject
            } else {
                GoalResponse::AcceptAndExecute
            }
        },
        |_| CancelResponse::Accept,
        |handle| {
            std::thread::spawn(move || execute(&handle));
        },
    )
    .unwrap()
}

pub fn execute(handle: &ServerGoalHandle<Fibonacci>) {
    let order = handle.goal().order;
    let feedback = |sequence: &[i32]| {
        handle.publish_feedback(roslite::msgs::test_msgs::action::Fibonacci_Feedback {
            sequence: sequence.to_vec().into(),
        })
    };
    match order {
        UNTIL_CANCELED | HOLD => {
            let sequence = fibonacci(1);
            feedback(&sequence).unwrap();
            while !(order == UNTIL_CANCELED && handle.is_canceling()) {
                if handle.status() == GoalStatusCode::Unknown {
                    return; // the server is gone
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            handle
                .canceled(Fibonacci_Result {
                    sequence: sequence.into(),
                })
                .unwrap();
        }
        _ => {
            let mut sequence = vec![0, 1];
            for i in 1..order as usize {
                sequence.push(sequence[i] + sequence[i - 1]);
                feedback(&sequence).unwrap();
            }
            handle
                .succeed(Fibonacci_Result {
                    sequence: sequence.into(),
                })
                .unwrap();
        }
    }
}

pub type FeedbackLog = Arc<Mutex<Vec<Vec<i32>>>>;

/// Sends a goal of `order`, logging its feedback.
pub fn send(
    client: &ActionClient<Fibonacci>,
    order: i32,
) -> (roslite::action::GoalFuture<Fibonacci>, FeedbackLog) {
    let log = FeedbackLog::default();
    let sink = log.clone();
    let future = client
        .send_goal_with_feedback(Fibonacci_Goal { order }, move |_, feedback| {
            sink.lock().unwrap().push(feedback.sequence.to_vec());
        })
        .unwrap();
    (future, log)
}

pub fn expected_feedback(order: i32) -> Vec<Vec<i32>> {
    (2..=order).map(fibonacci).collect()
}

pub fn assert_succeeds_with_every_feedback(client: &ActionClient<Fibonacci>, order: i32) {
    let (future, log) = send(client, order);
    let goal = future.wait(PATIENCE).expect("the goal is accepted");
    let result: WrappedResult<Fibonacci> = goal.result().wait(PATIENCE).unwrap();
    assert_eq!(result.status, GoalStatusCode::Succeeded);
    assert_eq!(result.goal_id, goal.goal_id());
    assert_eq!(result.result.sequence.to_vec(), fibonacci(order));
    // Feedback travels on its topic, the result as a service reply: the last feedback may
    // still be on its way.
    let expected = expected_feedback(order);
    assert!(
        super::wait_until(PATIENCE, || log.lock().unwrap().len() >= expected.len()),
        "feedback so far: {:?}",
        log.lock().unwrap()
    );
    assert_eq!(*log.lock().unwrap(), expected);
}

pub fn assert_rejected(client: &ActionClient<Fibonacci>) {
    let (future, log) = send(client, -1);
    let id = future.goal_id();
    match future.wait(PATIENCE) {
        Err(ActionError::Rejected { action, goal }) => {
            assert_eq!(action, "/fibonacci");
            assert_eq!(goal, id);
        }
        other => panic!("expected a rejection, got {:?}", other.map(|g| g.goal_id())),
    }
    assert!(log.lock().unwrap().is_empty());
}

pub fn assert_canceled(client: &ActionClient<Fibonacci>) {
    let (future, log) = send(client, UNTIL_CANCELED);
    let goal = future.wait(PATIENCE).unwrap();
    // Executing once its first feedback is here.
    assert!(super::wait_until(PATIENCE, || !log
        .lock()
        .unwrap()
        .is_empty()));
    let answer = client.cancel_goal(&goal).unwrap().wait(PATIENCE).unwrap();
    assert_eq!(answer.return_code, CancelGoal_Response::ERROR_NONE);
    assert_eq!(answer.goals_canceling.len(), 1);
    assert_eq!(answer.goals_canceling[0].goal_id, goal.goal_id().to_msg());
    let result = client.get_result(&goal).wait(PATIENCE).unwrap();
    assert_eq!(result.status, GoalStatusCode::Canceled);
    assert_eq!(result.result.sequence.to_vec(), fibonacci(1));
    // A second cancel finds the goal ended.
    let again = client.cancel_goal(&goal).unwrap().wait(PATIENCE).unwrap();
    assert_eq!(
        again.return_code,
        CancelGoal_Response::ERROR_GOAL_TERMINATED
    );
}

pub fn assert_two_goals_run_at_once(client: &ActionClient<Fibonacci>) {
    // One goal holds until canceled while the other runs to its end: they overlap.
    let (held, held_log) = send(client, UNTIL_CANCELED);
    let (quick, quick_log) = send(client, 8);
    let held = held.wait(PATIENCE).unwrap();
    let quick = quick.wait(PATIENCE).unwrap();
    assert_ne!(held.goal_id(), quick.goal_id());
    let quick_result = quick.result().wait(PATIENCE).unwrap();
    assert_eq!(quick_result.status, GoalStatusCode::Succeeded);
    assert_eq!(quick_result.result.sequence.to_vec(), fibonacci(8));
    assert!(held.status().is_active(), "{:?}", held.status());
    assert!(super::wait_until(PATIENCE, || quick_log
        .lock()
        .unwrap()
        .len()
        == 7));
    assert_eq!(*quick_log.lock().unwrap(), expected_feedback(8));
    let answer = client.cancel_all_goals().unwrap().wait(PATIENCE).unwrap();
    assert_eq!(answer.return_code, CancelGoal_Response::ERROR_NONE);
    assert_eq!(
        answer.goals_canceling.len(),
        1,
        "only the held goal was active"
    );
    let held_result = held.result().wait(PATIENCE).unwrap();
    assert_eq!(held_result.status, GoalStatusCode::Canceled);
    assert_eq!(*held_log.lock().unwrap(), vec![fibonacci(1)]);
}

/// Starts a goal the server holds and returns its result future once the goal executes.
pub fn start_held_goal(
    client: &ActionClient<Fibonacci>,
) -> (roslite::action::ClientGoalHandle<Fibonacci>, FeedbackLog) {
    let (future, log) = send(client, HOLD);
    let goal = future.wait(PATIENCE).unwrap();
    assert!(super::wait_until(PATIENCE, || !log
        .lock()
        .unwrap()
        .is_empty()));
    (goal, log)
}

pub fn assert_server_gone(
    result: Result<WrappedResult<Fibonacci>, ActionError>,
    id: roslite::GoalId,
) {
    match result {
        Err(error @ ActionError::ServerGone { .. }) => {
            assert_eq!(
                error,
                ActionError::ServerGone {
                    action: "/fibonacci".into(),
                    goal: id
                }
            );
            assert!(error.to_string().contains("went away"), "{error}");
        }
        other => panic!("expected ServerGone, got {other:?}"),
    }
}

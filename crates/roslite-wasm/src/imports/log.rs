//! Logging.

use super::*;

pub fn log(
    g: &mut dyn GuestCalls,
    logger: i32,
    severity: i32,
    function: i32,
    message: i32,
) -> ImportResult {
    let outcome = (|| {
        let logger = string(g, logger, "logger")?;
        let function = string(g, function, "function")?;
        let message = string(g, message, "message")?;
        // SAFETY: strings valid for the call.
        Ok(unsafe {
            roslite_c::log::roslite_log(
                optional(&logger),
                severity,
                optional(&function),
                optional(&message),
            )
        })
    })();
    finish(g, outcome)
}

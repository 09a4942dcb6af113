//! Where a guest's stdout and stderr go.

use std::io::Write;

/// Which of the guest's output streams bytes were written to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputStream {
    Stdout,
    Stderr,
}

/// Where a guest's stdout and stderr go: each `fd_write` to fd 1 or 2 is one call with the
/// bytes written (not necessarily whole lines; wrap in [`LineSink`] for lines).
pub trait OutputSink: Send {
    fn write(&mut self, stream: OutputStream, bytes: &[u8]);
}

impl<F: FnMut(OutputStream, &[u8]) + Send> OutputSink for F {
    fn write(&mut self, stream: OutputStream, bytes: &[u8]) {
        self(stream, bytes)
    }
}

/// The default sink: the guest's stdout and stderr go to the host process's, unchanged.
pub struct ProcessOutput;

impl OutputSink for ProcessOutput {
    fn write(&mut self, stream: OutputStream, bytes: &[u8]) {
        // A host whose own stdout is gone has nowhere to report that to; the guest's write
        // still succeeds, as a write to a closed terminal would not stop a native node.
        let _ = match stream {
            OutputStream::Stdout => std::io::stdout().lock().write_all(bytes),
            OutputStream::Stderr => std::io::stderr().lock().write_all(bytes),
        };
    }
}

/// Collects a stream's bytes into lines and hands each complete line (without its `\n`) to
/// `on_line`; what is left when it is dropped goes out as a last line. A line longer than
/// [`LineSink::MAX_LINE`] is cut there, so a guest that never writes `\n` cannot grow it
/// without bound.
pub struct LineSink<F: FnMut(OutputStream, &[u8]) + Send> {
    on_line: F,
    pending: [Vec<u8>; 2],
}

impl<F: FnMut(OutputStream, &[u8]) + Send> LineSink<F> {
    pub const MAX_LINE: usize = 64 * 1024;

    pub fn new(on_line: F) -> Self {
        Self {
            on_line,
            pending: [Vec::new(), Vec::new()],
        }
    }
}

impl<F: FnMut(OutputStream, &[u8]) + Send> OutputSink for LineSink<F> {
    fn write(&mut self, stream: OutputStream, mut bytes: &[u8]) {
        let pending = &mut self.pending[stream as usize];
        while !bytes.is_empty() {
            let room = Self::MAX_LINE - pending.len();
            match bytes[..bytes.len().min(room)]
                .iter()
                .position(|&b| b == b'\n')
            {
                Some(end) => {
                    pending.extend_from_slice(&bytes[..end]);
                    bytes = &bytes[end + 1..];
                }
                None if bytes.len() < room => {
                    pending.extend_from_slice(bytes);
                    return;
                }
                None => {
                    pending.extend_from_slice(&bytes[..room]);
                    bytes = &bytes[room..];
                }
            }
            (self.on_line)(stream, pending);
            pending.clear();
        }
    }
}

impl<F: FnMut(OutputStream, &[u8]) + Send> Drop for LineSink<F> {
    fn drop(&mut self) {
        for stream in [OutputStream::Stdout, OutputStream::Stderr] {
            let rest = std::mem::take(&mut self.pending[stream as usize]);
            if !rest.is_empty() {
                (self.on_line)(stream, &rest);
            }
        }
    }
}

//! Only protocol messages may reach the suite's protocol stream. The suite gives the harness a
//! pipe of its own for them (its file descriptor in REACT_CONFORMANCE_PROTOCOL_FD): file
//! descriptor 1, where `println!`, a logger or a C library writes, is then a log the suite keeps
//! with stderr. A suite that gives no pipe reads stdout: the module then keeps its own copy of
//! fd 1 for the messages and points fd 1 at stderr (as the Go and Ruby modules do).

use std::fs::File;
use std::io::Write;
use std::sync::{Mutex, OnceLock};

static OUT: OnceLock<Mutex<File>> = OnceLock::new();

pub(crate) fn write_line(line: &str) -> std::io::Result<()> {
    let out = OUT.get_or_init(|| Mutex::new(protocol_stream()));
    let mut out = out.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    out.write_all(line.as_bytes())?;
    out.flush()
}

pub(crate) fn keep_stdout_off_the_wire() {
    OUT.get_or_init(|| Mutex::new(protocol_stream()));
}

#[cfg(unix)]
fn protocol_stream() -> File {
    use std::os::fd::FromRawFd;
    use std::os::raw::c_int;
    extern "C" {
        fn dup(fd: c_int) -> c_int;
        fn dup2(from: c_int, to: c_int) -> c_int;
        fn fcntl(fd: c_int, cmd: c_int, ...) -> c_int;
    }
    const F_GETFD: c_int = 1; // the same on Linux and the BSDs
    let given = std::env::var("REACT_CONFORMANCE_PROTOCOL_FD").ok();
    std::env::remove_var("REACT_CONFORMANCE_PROTOCOL_FD"); // the harness's, not its children's
    let pipe = given.and_then(|fd| fd.parse::<c_int>().ok()).filter(|fd| *fd >= 3);
    // SAFETY: the descriptors are checked open (fcntl) or were just made (dup), and each File made
    // here is the only owner of its descriptor.
    unsafe {
        if let Some(fd) = pipe.filter(|fd| fcntl(*fd, F_GETFD) >= 0) {
            return File::from_raw_fd(fd);
        }
        let kept = dup(1);
        if kept < 0 {
            return File::from_raw_fd(2); // no fd 1 to keep: there is no protocol stream to guard
        }
        dup2(2, 1);
        File::from_raw_fd(kept)
    }
}

#[cfg(not(unix))]
fn protocol_stream() -> File {
    // This platform's stdout cannot be moved aside: what the library prints to it reaches the wire.
    use std::os::windows::io::{AsRawHandle, FromRawHandle};
    unsafe { File::from_raw_handle(std::io::stdout().as_raw_handle()) }
}

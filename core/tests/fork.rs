//! A generator inherited through `fork()` refuses to issue in the child, and goes on
//! issuing in the parent; a generator made in the child works.
#![cfg(all(unix, feature = "std"))]

use ferroflake::{Error, ErrorKind, Generator, Layout};

/// Forks; runs `child` in the child and exits with its code (0: the child's checks held).
fn in_child(child: impl FnOnce() -> i32) -> i32 {
    // SAFETY: the child only runs `child`, then `_exit`s without unwinding or running the
    // parent's destructors.
    match unsafe { libc::fork() } {
        -1 => panic!("fork failed"),
        0 => {
            let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(child)).unwrap_or(99);
            unsafe { libc::_exit(code) }
        }
        pid => {
            let mut status = 0;
            // SAFETY: waits for the child just made.
            assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
            assert!(libc::WIFEXITED(status), "child did not exit normally");
            libc::WEXITSTATUS(status)
        }
    }
}

#[test]
fn an_inherited_generator_refuses_in_the_child_and_the_parent_goes_on() {
    let generator = Generator::new(Layout::twitter(), 1).unwrap();
    let before = generator.next_id().unwrap();
    let code = in_child(|| {
        let mut ids = [0u64; 4];
        match (generator.next_id(), generator.next_ids(&mut ids)) {
            (
                Err(Error::GeneratorForked { made_in_pid, pid }),
                Err(Error::GeneratorForked { .. }),
            ) if made_in_pid != pid => {}
            _ => return 1,
        }
        if generator.next_id().map_err(|e| e.kind()) != Err(ErrorKind::GeneratorForked) {
            return 2;
        }
        // A generator made in the child issues.
        let fresh = Generator::new(Layout::twitter(), 2).unwrap();
        if fresh.next_id().is_err() {
            return 3;
        }
        0
    });
    assert_eq!(code, 0, "the child's checks failed (code {code})");
    let after = generator.next_id().unwrap();
    assert!(after > before, "the parent issues on");
}

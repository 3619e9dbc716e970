//! One job slot per core for the whole process: every external tool run
//! (Yosys, Verilator, g++) and every elaboration takes a slot while it runs,
//! so tests building models on several threads, and a model compiling its
//! C++ files in parallel, never oversubscribe the machine. A slot is only
//! held around a leaf step, never while waiting for another slot.

use std::sync::{Condvar, Mutex, OnceLock};

/// Slots: `$KVFORGE_JOBS`, else cargo's `NUM_JOBS`, else the core count.
pub fn count() -> usize {
    ["KVFORGE_JOBS", "NUM_JOBS"]
        .iter()
        .find_map(|v| std::env::var(v).ok().and_then(|s| s.parse::<usize>().ok()))
        .unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2))
        .max(1)
}

struct Slots {
    free: Mutex<usize>,
    cv: Condvar,
}

fn slots() -> &'static Slots {
    static S: OnceLock<Slots> = OnceLock::new();
    S.get_or_init(|| Slots { free: Mutex::new(count()), cv: Condvar::new() })
}

/// A held slot; released on drop.
pub struct Slot(());

impl Drop for Slot {
    fn drop(&mut self) {
        let s = slots();
        *s.free.lock().unwrap() += 1;
        s.cv.notify_one();
    }
}

/// Waits for a free slot.
pub fn acquire() -> Slot {
    let s = slots();
    let mut free = s.free.lock().unwrap();
    while *free == 0 {
        free = s.cv.wait(free).unwrap();
    }
    *free -= 1;
    Slot(())
}

/// Runs `f` over `items` on up to `count()` threads (each item should take
/// its own slot for the work it does); results in input order. A panic in
/// `f` propagates after the others finish.
pub fn map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let next = AtomicUsize::new(0);
    let out: Mutex<Vec<Option<std::thread::Result<R>>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    std::thread::scope(|sc| {
        for _ in 0..count().min(items.len()) {
            sc.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= items.len() {
                    break;
                }
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&items[i])));
                out.lock().unwrap()[i] = Some(r);
            });
        }
    });
    out.into_inner()
        .unwrap()
        .into_iter()
        .map(|r| match r.expect("every item ran") {
            Ok(v) => v,
            Err(e) => std::panic::resume_unwind(e),
        })
        .collect()
}

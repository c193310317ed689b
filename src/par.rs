//! Parallel work whose results are consumed in order, a few at a time.
//!
//! `par_iter().map().collect()` holds every result until the last is done;
//! a check of a whole catalog tree (thousands of bundles) then holds
//! thousands of reports. [`ordered_window`] instead lets workers run at most
//! a window ahead of the consumer, so memory is bounded by the window, not
//! by the number of items, while output stays in input order.

use std::collections::BTreeMap;
use std::sync::{Condvar, Mutex, MutexGuard};

/// How many items per worker may be in progress or done and not yet
/// consumed: enough that one slow item does not idle the other workers
/// for long, few enough that memory stays that of a handful of items.
const WINDOW_PER_WORKER: usize = 2;

/// Runs `work` on every item on rayon's number of threads and hands each
/// result to `sink` in the order of `items`, on the calling thread (so
/// `sink` may hold a `!Send` writer such as a locked stdout). No more than
/// a small window of results exists at a time. A `sink` error stops the
/// run (items not started are not worked on) and is returned. A panic in
/// `work` is resumed on the calling thread.
pub fn ordered_window<T, R, E>(
    items: &[T],
    work: impl Fn(&T) -> R + Sync,
    mut sink: impl FnMut(R) -> Result<(), E>,
) -> Result<(), E>
where
    T: Sync,
    R: Send,
{
    let workers = rayon::current_num_threads().min(items.len());
    if workers <= 1 {
        for item in items {
            sink(work(item))?;
        }
        return Ok(());
    }
    let window = workers * WINDOW_PER_WORKER;
    let state = Mutex::new(State {
        next: 0,
        taken: 0,
        done: BTreeMap::new(),
        stop: false,
        panic: None,
    });
    let changed = Condvar::new();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| loop {
                let i = {
                    let mut st = lock(&state);
                    loop {
                        if st.stop || st.next >= items.len() {
                            return;
                        }
                        if st.next < st.taken + window {
                            break;
                        }
                        st = changed.wait(st).unwrap_or_else(|e| e.into_inner());
                    }
                    st.next += 1;
                    st.next - 1
                };
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(&items[i])));
                let mut st = lock(&state);
                match r {
                    Ok(r) => {
                        st.done.insert(i, r);
                    }
                    Err(p) => {
                        st.stop = true;
                        st.panic.get_or_insert(p);
                    }
                }
                changed.notify_all();
            });
        }
        let mut result = Ok(());
        for i in 0..items.len() {
            let r = {
                let mut st = lock(&state);
                loop {
                    if let Some(p) = st.panic.take() {
                        drop(st);
                        std::panic::resume_unwind(p);
                    }
                    if let Some(r) = st.done.remove(&i) {
                        st.taken = i + 1;
                        changed.notify_all();
                        break r;
                    }
                    st = changed.wait(st).unwrap_or_else(|e| e.into_inner());
                }
            };
            if let Err(e) = sink(r) {
                lock(&state).stop = true;
                changed.notify_all();
                result = Err(e);
                break;
            }
        }
        result
    })
}

/// What the workers and the consumer share.
struct State<R> {
    /// The next item to start.
    next: usize,
    /// Items handed to the consumer; workers stay below `taken + window`.
    taken: usize,
    /// Finished results not yet consumed, by item index.
    done: BTreeMap<usize, R>,
    /// Set when the consumer gave up or a worker panicked.
    stop: bool,
    /// A worker's panic, to resume on the consumer's thread.
    panic: Option<Box<dyn std::any::Any + Send>>,
}

fn lock<R>(m: &Mutex<State<R>>) -> MutexGuard<'_, State<R>> {
    // A panic is caught outside the lock, so poisoning never hides state.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_in_order_and_the_window_is_bounded() {
        let items: Vec<usize> = (0..200).collect();
        let live = std::sync::atomic::AtomicUsize::new(0);
        let max_live = std::sync::atomic::AtomicUsize::new(0);
        let mut seen = Vec::new();
        let r: Result<(), ()> = ordered_window(
            &items,
            |&i| {
                use std::sync::atomic::Ordering::SeqCst;
                let now = live.fetch_add(1, SeqCst) + 1;
                max_live.fetch_max(now, SeqCst);
                // Later items finish first, to exercise the reordering.
                std::thread::sleep(std::time::Duration::from_micros((200 - i as u64) % 7 * 50));
                i
            },
            |i| {
                live.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                seen.push(i);
                Ok(())
            },
        );
        assert!(r.is_ok());
        assert_eq!(seen, items);
        let workers = rayon::current_num_threads().min(items.len());
        assert!(max_live.into_inner() <= (workers * WINDOW_PER_WORKER).max(1) + 1);
    }

    #[test]
    fn a_sink_error_stops_the_run() {
        let items: Vec<usize> = (0..1000).collect();
        let worked = std::sync::atomic::AtomicUsize::new(0);
        let r = ordered_window(
            &items,
            |&i| {
                worked.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                i
            },
            |i| if i == 3 { Err(i) } else { Ok(()) },
        );
        assert_eq!(r, Err(3));
        assert!(worked.into_inner() < 1000);
    }

    #[test]
    fn a_panic_in_work_reaches_the_caller() {
        let items: Vec<usize> = (0..50).collect();
        let r = std::panic::catch_unwind(|| {
            ordered_window(
                &items,
                |&i| {
                    assert!(i != 20, "boom");
                    i
                },
                |_| Ok::<(), ()>(()),
            )
        });
        assert!(r.is_err());
    }
}

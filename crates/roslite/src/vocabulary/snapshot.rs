//! The lists a publish reads for every message and matching changes now and then.

use std::sync::{Arc, PoisonError, RwLock};

/// A list replaced on each change, never changed in place: a reader takes a snapshot with one
/// reference count and holds no lock while it goes through it. So a publish that waits (for
/// room in a keep-all queue, or in an outlet) does not hold up matching, and a transport that
/// attaches an outlet while a publish calls into it does not deadlock.
pub(crate) struct SnapshotList<T>(RwLock<Arc<[T]>>);

impl<T> Default for SnapshotList<T> {
    fn default() -> Self {
        Self(RwLock::new(Arc::new([])))
    }
}

impl<T: Clone> SnapshotList<T> {
    pub(crate) fn snapshot(&self) -> Arc<[T]> {
        self.0
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Appends `item`; returns the new length.
    pub(crate) fn push(&self, item: T) -> usize {
        self.replace(|all| all.iter().cloned().chain([item]).collect())
    }

    /// Keeps the items `keep` says yes to; returns the new length.
    pub(crate) fn retain(&self, mut keep: impl FnMut(&T) -> bool) -> usize {
        self.replace(|all| all.iter().filter(|item| keep(item)).cloned().collect())
    }

    fn replace(&self, with: impl FnOnce(&[T]) -> Arc<[T]>) -> usize {
        let mut list = self.0.write().unwrap_or_else(PoisonError::into_inner);
        *list = with(&list);
        list.len()
    }
}

#[cfg(test)]
mod tests {
    use super::SnapshotList;

    #[test]
    fn a_snapshot_stays_as_it_was_taken() {
        let list = SnapshotList::default();
        assert_eq!(list.push(1), 1);
        assert_eq!(list.push(2), 2);
        let before = list.snapshot();
        assert_eq!(list.retain(|&i| i != 1), 1);
        assert_eq!(list.push(3), 2);
        assert_eq!(&before[..], &[1, 2]);
        assert_eq!(&list.snapshot()[..], &[2, 3]);
    }
}

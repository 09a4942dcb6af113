//! A subscription's content filter as its paths meet it: every message, whichever way it
//! came, is checked here before it is queued (the language, and why it runs on serialized
//! bytes: [`crate::content_filter`]). The filter can be replaced while messages arrive on other
//! threads: a subscription without one pays one atomic load per message.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{OnceLock, PoisonError, RwLock};

use roslite_msgs::description::TypeDescription;
use roslite_msgs::Message;

use crate::seam::{ContentFilterAnnouncement, FilterVerdict};
use crate::vocabulary::content_filter::{ContentFilter, ContentFilterError, ContentFilterOptions};

/// Numbers the content filters set in this process (see
/// [`ContentFilterAnnouncement::number`]), from 0 as rmw_fastrtps counts them.
static NEXT_FILTER_NUMBER: AtomicU64 = AtomicU64::new(0);

struct Current {
    filter: ContentFilter,
    number: u64,
}

/// A subscription's filter, if it has one, and what it dropped.
pub(crate) struct FilterState {
    /// Whether `current` holds a filter, read first so that a subscription without one takes
    /// no lock.
    enabled: AtomicBool,
    current: RwLock<Option<Current>>,
    type_name: &'static str,
    /// What filters read fields by; given at creation or later ([`Self::describe`]).
    description: OnceLock<&'static TypeDescription>,
    filtered_out: AtomicU64,
}

impl FilterState {
    /// The state of a subscription to `type_name` (described by `description`) without a
    /// filter, made without the filter compiler (which only setting a filter reaches).
    pub(crate) fn unfiltered(
        type_name: &'static str,
        description: Option<&'static TypeDescription>,
    ) -> Self {
        Self {
            enabled: AtomicBool::new(false),
            current: RwLock::new(None),
            type_name,
            description: description.map(OnceLock::from).unwrap_or_default(),
            filtered_out: AtomicU64::new(0),
        }
    }

    /// The state of a subscription to `type_name` (described by `description`) made with
    /// `options`.
    ///
    /// # Errors
    /// [`ContentFilterError`] for options that do not compile for the type.
    pub(crate) fn new(
        type_name: &'static str,
        description: Option<&'static TypeDescription>,
        options: ContentFilterOptions,
    ) -> Result<Self, ContentFilterError> {
        let state = Self::unfiltered(type_name, description);
        state.set(options)?;
        Ok(state)
    }

    /// What a subscription's `set_content_filter` does: replaces the filter with the one of
    /// `expression` and `parameters` and, if that changed it, has `backends` announce the
    /// change for subscription `id`.
    ///
    /// # Errors
    /// As [`Self::set`]; the filter in place stays.
    pub(crate) fn set_and_announce(
        &self,
        (expression, parameters): (&str, &[&str]),
        backends: &crate::seam::BackendSet,
        id: u64,
    ) -> Result<(), ContentFilterError> {
        let options = ContentFilterOptions::new(expression, parameters.iter().copied());
        if self.set(options)? {
            backends.subscription_filter_changed(id);
        }
        Ok(())
    }

    /// Replaces the filter (an empty expression removes it); on an error the old one stays.
    /// Whether anything changed.
    ///
    /// # Errors
    /// [`ContentFilterError`] for options that do not compile for the type.
    pub(crate) fn set(&self, options: ContentFilterOptions) -> Result<bool, ContentFilterError> {
        let description = self.description.get().copied();
        let filter = ContentFilter::for_type(self.type_name, description, options)?;
        let mut current = self.current.write().unwrap_or_else(PoisonError::into_inner);
        let unchanged = match (&*current, &filter) {
            (Some(old), Some(new)) => old.filter.options() == new.options(),
            (None, None) => true,
            _ => false,
        };
        if unchanged {
            return Ok(false);
        }
        // A filter replacing another keeps its number (rmw_fastrtps changes the expression of
        // the content-filtered topic it has); one added after none gets a new one.
        let number = match &*current {
            Some(old) => old.number,
            None => NEXT_FILTER_NUMBER.fetch_add(1, Ordering::Relaxed),
        };
        self.enabled.store(filter.is_some(), Ordering::Release);
        *current = filter.map(|filter| Current { filter, number });
        Ok(true)
    }

    /// Gives the type its description, if it had none (the first one given stays).
    pub(crate) fn describe(&self, description: &'static TypeDescription) {
        let _ = self.description.set(description);
    }

    /// The ROS type name of the messages filtered.
    pub(crate) fn type_name(&self) -> &'static str {
        self.type_name
    }

    pub(crate) fn is_enabled(&self) -> bool {
        self.enabled.load(Ordering::Acquire)
    }

    /// The filter's expression and parameters; `None` without one.
    pub(crate) fn options(&self) -> Option<ContentFilterOptions> {
        let current = self.current.read().unwrap_or_else(PoisonError::into_inner);
        current.as_ref().map(|c| c.filter.options().clone())
    }

    pub(crate) fn announcement(&self) -> Option<ContentFilterAnnouncement> {
        let current = self.current.read().unwrap_or_else(PoisonError::into_inner);
        current.as_ref().map(|c| ContentFilterAnnouncement {
            options: c.filter.options().clone(),
            number: c.number,
        })
    }

    /// Messages the filter dropped so far.
    pub(crate) fn filtered_out(&self) -> u64 {
        self.filtered_out.load(Ordering::Relaxed)
    }

    /// The verdict on a serialized message (counted when it is dropped).
    pub(crate) fn check_bytes(&self, payload: &[u8]) -> FilterVerdict {
        self.check(|filter| filter.passes(payload))
    }

    /// The verdict on a message published in this process (serialized for the filter).
    pub(crate) fn check_message<T: Message>(&self, message: &T) -> FilterVerdict {
        self.check(|filter| filter.passes_message(message))
    }

    fn check(
        &self,
        passes: impl FnOnce(&ContentFilter) -> Result<bool, roslite_cdr::DecodeError>,
    ) -> FilterVerdict {
        if !self.is_enabled() {
            return FilterVerdict::Passes;
        }
        let current = self.current.read().unwrap_or_else(PoisonError::into_inner);
        let verdict = match current.as_ref().map(|c| passes(&c.filter)) {
            None | Some(Ok(true)) => FilterVerdict::Passes,
            Some(Ok(false)) => FilterVerdict::FilteredOut,
            Some(Err(_)) => FilterVerdict::Unreadable,
        };
        if verdict == FilterVerdict::FilteredOut {
            self.filtered_out.fetch_add(1, Ordering::Relaxed);
        }
        verdict
    }
}

//! The times of calls answered from the journal: a resumed run's trace
//! shows when they really ran, not when they were replayed.

use super::{DurableCaller, ms_of};
use crate::run::trace::Trace;

impl DurableCaller {
    /// Puts back the times at which the calls answered from the journal
    /// really ran: a node done before the resumption keeps its place on
    /// the timeline, and the run starts when its first execution did, so
    /// the time no worker held the run shows as a gap.
    pub fn restore_times(&self, trace: &mut Trace, first_start: Option<&str>) {
        use time::format_description::well_known::Rfc3339;
        let fmt = |ms: i128| {
            time::OffsetDateTime::from_unix_timestamp_nanos(ms * 1_000_000)
                .ok()
                .and_then(|t| t.format(&Rfc3339).ok())
        };
        self.restore_call_times(trace, &fmt);
        let ran = self.ran.lock().unwrap_or_else(|e| e.into_inner());
        let live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        for (node, &(start, end)) in ran.iter() {
            let Some(rec) = trace.nodes.get_mut(node) else {
                continue;
            };
            // A node that also called live (a fan-out cut short) ends when
            // its last live call did; one answered wholly from the journal
            // ends when its last journaled call did.
            let own_end = rec
                .started_at
                .as_deref()
                .and_then(ms_of)
                .map(|s| s + i128::from(rec.duration_ms))
                .filter(|_| live.contains(node));
            let end = own_end.map_or(end, |e| e.max(end));
            if let Some(at) = fmt(start) {
                rec.started_at = Some(at);
                rec.duration_ms = u64::try_from(end - start).unwrap_or(0);
            }
        }
        let c = &mut trace.composition;
        if let (Some(first), Some(now)) = (first_start, c.started_at.as_deref()) {
            let (Some(f), Some(n)) = (ms_of(first), ms_of(now)) else {
                return;
            };
            if f < n {
                c.duration_ms += u64::try_from(n - f).unwrap_or(0);
                c.started_at = Some(first.to_owned());
            }
        }
    }

    /// Puts back the times of each attempt answered from the journal, found
    /// by its request, and so of each fan-out iteration it belongs to: an
    /// iteration spans its attempts.
    fn restore_call_times(&self, trace: &mut Trace, fmt: &dyn Fn(i128) -> Option<String>) {
        let mut ran = self.ran_calls.lock().unwrap_or_else(|e| e.into_inner());
        for (id, rec) in trace.nodes.iter_mut() {
            let mut touched = std::collections::BTreeSet::new();
            for c in &mut rec.calls {
                let Some(request) = c.rpc.tree().get("request") else {
                    continue;
                };
                let Some(i) = ran
                    .iter()
                    .position(|(node, r, ..)| node == id && r == request)
                else {
                    continue;
                };
                let (_, _, start, end) = ran.swap_remove(i);
                c.started_at = fmt(start);
                c.duration_ms = u64::try_from(end - start).unwrap_or(0);
                touched.extend(c.iteration);
            }
            for i in touched {
                let spans = rec
                    .calls
                    .iter()
                    .filter(|c| c.iteration == Some(i))
                    .filter_map(|c| {
                        let s = ms_of(c.started_at.as_deref()?)?;
                        Some((s, s + i128::from(c.duration_ms)))
                    });
                let Some((start, end)) = spans.reduce(|(s, e), (s2, e2)| (s.min(s2), e.max(e2)))
                else {
                    continue;
                };
                if let Some(it) = rec.iterations.get_mut(i) {
                    it.started_at = fmt(start);
                    it.duration_ms = u64::try_from(end - start).unwrap_or(0);
                }
            }
        }
    }
}

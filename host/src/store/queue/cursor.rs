//! A walk back through buckets of an index (a day of deliveries, an hour of the event
//! log), one position per partition, and its cursor as a client carries it.

/// Where a listing stands in one partition: the bucket (a day of deliveries, an hour of the
/// event log) it reads, and how many of that bucket's entries (counted from its first) are
/// still to be listed — `None`: all of them as its list is when first read. Lists only grow
/// at their end (a bucket goes whole), so a position stays valid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::store) struct Position {
    pub(in crate::store) bucket: u32,
    pub(in crate::store) end: Option<u64>,
}

/// A listing's cursor: its position in every partition (`None` once one is exhausted). As
/// text: `bucket.end` (`bucket.x` for the whole bucket) or `-` per partition,
/// comma-separated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cursor(pub(in crate::store) Vec<Option<Position>>);

impl Cursor {
    /// The first page's cursor: every partition from the end of bucket `newest`.
    pub(in crate::store) fn start(partitions: u16, newest: u32) -> Cursor {
        Cursor((0..partitions).map(|_| Some(Position { bucket: newest, end: None })).collect())
    }

    /// A cursor at the end of everything.
    pub(in crate::store) fn done(partitions: u16) -> Cursor {
        Cursor(vec![None; usize::from(partitions)])
    }

    pub(in crate::store) fn positions(&mut self) -> &mut [Option<Position>] {
        &mut self.0
    }

    /// Its text, or `None` when every partition is exhausted.
    pub(in crate::store) fn text_unless_exhausted(&self) -> Option<String> {
        (!self.exhausted()).then(|| self.text())
    }

    /// A cursor given back by a client, if it is one of a data set with `partitions` whose
    /// newest bucket is `newest` (a cursor past it is none Weir gave out).
    pub fn parse(text: &str, partitions: u16, newest: u32) -> Option<Cursor> {
        let positions: Option<Vec<Option<Position>>> = text
            .split(',')
            .map(|part| match part {
                "-" => Some(None),
                _ => {
                    let (bucket, end) = part.split_once('.')?;
                    let end = if end == "x" { None } else { Some(end.parse().ok()?) };
                    Some(Some(Position { bucket: bucket.parse().ok()?, end }))
                }
            })
            .collect();
        positions
            .filter(|p| p.len() == usize::from(partitions))
            .filter(|p| p.iter().flatten().all(|at| at.bucket <= newest))
            .map(Cursor)
    }

    pub fn text(&self) -> String {
        let parts: Vec<String> = self
            .0
            .iter()
            .map(|p| match p {
                Some(Position { bucket, end: Some(end) }) => format!("{bucket}.{end}"),
                Some(Position { bucket, end: None }) => format!("{bucket}.x"),
                None => "-".to_owned(),
            })
            .collect();
        parts.join(",")
    }

    fn exhausted(&self) -> bool {
        self.0.iter().all(Option::is_none)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_read_back_and_refuse_what_they_are_not() {
        let cursor = Cursor(vec![
            Some(Position { bucket: 20_415, end: Some(17) }),
            None,
            Some(Position { bucket: 3, end: None }),
        ]);
        assert_eq!(cursor.text(), "20415.17,-,3.x");
        assert_eq!(Cursor::parse("20415.17,-,3.x", 3, 20_415), Some(cursor));
        assert_eq!(Cursor::parse("20415.17", 3, 20_415), None, "one position per partition");
        assert_eq!(Cursor::parse("dlv_x,-,-", 3, 20_415), None);
        assert_eq!(Cursor::parse("20416.17,-,3.x", 3, 20_415), None, "none stands past the newest bucket");
        assert_eq!(Cursor::parse("4294967295.18446744073709551615,-,-", 3, 20_415), None);
        assert!(Cursor(vec![None, None]).exhausted());
    }
}

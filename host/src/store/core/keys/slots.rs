//! Where keys fall: the hash slot of a key, the tags that spread the partitions evenly over
//! the slot space, and a key's text built in one allocation.

/// Slots of a Redis Cluster.
pub(super) const SLOTS: u32 = 16384;

/// The Redis Cluster slot of a key (CRC16 of its hash tag, or of the whole key).
pub fn slot(key: &str) -> u16 {
    let bytes = key.as_bytes();
    let tagged = bytes.iter().position(|b| *b == b'{').and_then(|open| {
        let rest = &bytes[open + 1..];
        rest.iter().position(|b| *b == b'}').filter(|close| *close > 0).map(|close| &rest[..close])
    });
    (crc16::State::<crc16::XMODEM>::calculate(tagged.unwrap_or(bytes)) as u32 % SLOTS) as u16
}

/// A hash tag for partition `i` of `n` whose slot lies in the `i`th of `n` equal slices of
/// the slot space: masters own contiguous slot ranges, so partitions spread evenly over them.
pub(super) fn partition_tag(i: u16, n: u16) -> String {
    let (lo, hi) = (u32::from(i) * SLOTS / u32::from(n), (u32::from(i) + 1) * SLOTS / u32::from(n));
    for salt in 0u32.. {
        let tag = format!("p{i}.{salt}");
        let slot = u32::from(crc16::State::<crc16::XMODEM>::calculate(tag.as_bytes())) % SLOTS;
        if (lo..hi).contains(&slot) {
            return format!("{{{tag}}}");
        }
    }
    unreachable!("some salt lands in every slice of the slot space")
}

/// `heads` then each of `parts` after a `:`, in one allocation of the right size (keys are
/// built for every command; `format!` and pushes grew each one several times).
pub(super) fn joined(heads: &[&str], parts: &[&str]) -> String {
    let len = heads.iter().map(|h| h.len()).sum::<usize>() + parts.iter().map(|p| p.len() + 1).sum::<usize>();
    let mut key = String::with_capacity(len);
    for head in heads {
        key.push_str(head);
    }
    for part in parts {
        key.push(':');
        key.push_str(part);
    }
    key
}

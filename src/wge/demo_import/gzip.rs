//! Gzip members (RFC 1952) unpacked with the pure-Rust inflater, within a size limit.

/// Unpacks a gzip member (RFC 1952) with the pure-Rust inflater, refusing output beyond `limit`
/// and checking the trailer's length and CRC-32.
pub(super) fn gunzip(bytes: &[u8], limit: usize) -> Result<Vec<u8>, String> {
    let bad = |why: &str| format!("not a readable .json.gz file: {why}");
    if bytes.len() < 18 || bytes[0..2] != [0x1f, 0x8b] {
        return Err(bad("too short"));
    }
    if bytes[2] != 8 {
        return Err(bad("unknown compression method"));
    }
    let flags = bytes[3];
    let mut at = 10;
    if flags & 0x04 != 0 {
        let n = *bytes.get(at).ok_or_else(|| bad("truncated header"))? as usize
            | (*bytes.get(at + 1).ok_or_else(|| bad("truncated header"))? as usize) << 8;
        at += 2 + n;
    }
    for flag in [0x08, 0x10] {
        if flags & flag != 0 {
            let end = bytes.get(at..).and_then(|b| b.iter().position(|&c| c == 0)).ok_or_else(|| bad("truncated header"))?;
            at += end + 1;
        }
    }
    if flags & 0x02 != 0 {
        at += 2;
    }
    if at + 8 > bytes.len() {
        return Err(bad("truncated"));
    }
    let body = &bytes[at..bytes.len() - 8];
    let out = miniz_oxide::inflate::decompress_to_vec_with_limit(body, limit).map_err(|e| {
        if matches!(e.status, miniz_oxide::inflate::TINFLStatus::HasMoreOutput) {
            format!("the demonstration unpacks to more than {} MB", limit / 1_000_000)
        } else {
            bad("corrupt compressed data")
        }
    })?;
    let trailer = &bytes[bytes.len() - 8..];
    let crc = u32::from_le_bytes(trailer[0..4].try_into().unwrap());
    let size = u32::from_le_bytes(trailer[4..8].try_into().unwrap());
    if size != out.len() as u32 || crc != crc32(&out) {
        return Err(bad("checksum mismatch (the file is damaged)"));
    }
    Ok(out)
}

fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = (crc >> 1) ^ (0xEDB8_8320 & (crc & 1).wrapping_neg());
        }
    }
    !crc
}

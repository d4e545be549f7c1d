//! A fast, deterministic hasher for small integer keys (body and proxy ids, pair keys, feature
//! keys): every integer written is folded into the state with the SplitMix64 finaliser. The
//! standard library's SipHash guards against keys crafted to collide, which ids made by the
//! engine itself need no guard against; it was about 2 % of the 200-body heap's profile samples
//! (the solver's warm-start cache and the narrow phase's kept fronts).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// The hasher (see the module documentation). A single `u64` key hashes to its SplitMix64
/// finaliser.
#[derive(Clone, Copy, Debug, Default)]
pub struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u8(&mut self, x: u8) {
        self.write_u64(u64::from(x));
    }
    fn write_u32(&mut self, x: u32) {
        self.write_u64(u64::from(x));
    }
    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64);
    }
    fn write_u64(&mut self, x: u64) {
        let mut z = (self.0 ^ x).wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        self.0 = z ^ (z >> 31);
    }
}

/// A hash map keyed by engine-made integers, hashed with [`KeyHasher`].
pub type KeyMap<K, V> = HashMap<K, V, BuildHasherDefault<KeyHasher>>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::{BuildHasher, Hash};

    fn hash<T: Hash>(t: &T) -> u64 {
        BuildHasherDefault::<KeyHasher>::default().hash_one(t)
    }

    /// Composite keys that differ in any one field, or only in their fields' order, hash apart;
    /// a map keyed by them finds every key.
    #[test]
    fn composite_keys_hash_apart() {
        let mut seen = std::collections::HashSet::new();
        for a in 0..20usize {
            for b in 0..20usize {
                for f in [0u64, 1, 1 << 62, 1 << 63] {
                    for k in 0..2u8 {
                        assert!(seen.insert(hash(&(a, b, f, k))), "{a} {b} {f} {k}");
                    }
                }
            }
        }
        let mut map: KeyMap<(usize, usize, u64, u8), usize> = KeyMap::default();
        for (i, key) in [(1, 2, 3, 0), (2, 1, 3, 0), (1, 2, 3, 1)]
            .into_iter()
            .enumerate()
        {
            map.insert(key, i);
        }
        assert_eq!(map[&(2, 1, 3, 0)], 1);
        assert_eq!(map.len(), 3);
    }
}

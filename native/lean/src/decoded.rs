//! The decoded job, inputs, outputs and facets containers of a RunEvent (its envelope: scan.rs):
//! the fields lean.py's msgspec structs take, each of its type, the rest kept as its bytes.

use std::borrow::Cow;

use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

/// `T` decoded from a JSON object only: a derived struct would also take the array of its fields'
/// values, which lean.py's msgspec structs refuse.
pub(crate) struct Obj<T>(pub(crate) T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Obj<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        T::deserialize(ObjectOnly(d)).map(Obj)
    }
}

struct ObjectOnly<D>(D);

impl<'de, D: Deserializer<'de>> Deserializer<'de> for ObjectOnly<D> {
    type Error = D::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_any(visitor)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_struct(name, fields, MapOnly(visitor))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option
        unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
    }
}

struct MapOnly<V>(V);

impl<'de, V: Visitor<'de>> Visitor<'de> for MapOnly<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        self.0.expecting(f)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.0.visit_map(map)
    }
}

// -- the decoded core ------------------------------------------------------------------------------

/// A field kept as its bytes, whatever JSON value it holds (`null` included); None when absent.
#[derive(Default)]
pub(crate) struct MaybeRaw<'a>(pub(crate) Option<&'a RawValue>);

impl<'de: 'a, 'a> Deserialize<'de> for MaybeRaw<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        <&'a RawValue>::deserialize(d).map(|raw| MaybeRaw(Some(raw)))
    }
}

#[derive(Deserialize)]
pub(crate) struct Text<'a>(#[serde(borrow)] pub(crate) Cow<'a, str>);

/// A facets container's facets in their order, each kept as its bytes.
pub(crate) struct Pairs<'a>(pub(crate) Vec<(Cow<'a, str>, &'a RawValue)>);

impl<'de: 'a, 'a> Deserialize<'de> for Pairs<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for Visit<'a> {
            type Value = Pairs<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(
                self,
                mut map: M,
            ) -> Result<Pairs<'a>, M::Error> {
                let mut pairs = Vec::new();
                while let Some(name) = map.next_key::<Text<'de>>()? {
                    pairs.push((name.0, map.next_value::<&'de RawValue>()?));
                }
                Ok(Pairs(pairs))
            }
        }
        d.deserialize_map(Visit(std::marker::PhantomData))
    }
}

/// A job, an input or an output: its namespace and name, and its facets containers as their
/// bytes (a job or an input holding `outputFacets`, or a job `inputFacets`, is lean.py's to judge).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Entity<'a> {
    #[serde(borrow)]
    pub(crate) namespace: Cow<'a, str>,
    #[serde(borrow)]
    pub(crate) name: Cow<'a, str>,
    #[serde(default, borrow)]
    pub(crate) facets: MaybeRaw<'a>,
    #[serde(rename = "inputFacets", default, borrow)]
    pub(crate) input_facets: MaybeRaw<'a>,
    #[serde(rename = "outputFacets", default, borrow)]
    pub(crate) output_facets: MaybeRaw<'a>,
}

impl<'a> Entity<'a> {
    /// (its input facets, its output facets) for an input, the other way round for an output.
    pub(crate) fn extras(&self, input: bool) -> (Option<&'a RawValue>, Option<&'a RawValue>) {
        if input {
            (self.input_facets.0, self.output_facets.0)
        } else {
            (self.output_facets.0, self.input_facets.0)
        }
    }

    /// Whether its namespace and name are within their limits (events/limits.py).
    pub(crate) fn within_limits(&self) -> bool {
        self.namespace.len() <= MAX_NAMESPACE_BYTES && self.name.len() <= MAX_NAME_BYTES
    }
}

pub(crate) const MAX_NAMESPACE_BYTES: usize = 256; // events/limits.py
pub(crate) const MAX_NAME_BYTES: usize = 600;

/// Facets of jobs and datasets may carry `_deleted` (lean._DELETABLE).
pub(crate) fn deletable(kind: &str) -> bool {
    kind == "job" || kind == "dataset"
}

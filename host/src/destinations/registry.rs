//! The registry's machinery: from one line per kind (in `destinations/mod.rs`: its variant
//! of `Spec`, its name as `type` says it, and the module that implements [`Kind`]) come the
//! spec's variants and their JSON, the list of kinds the forms and the document show
//! (`KINDS`), and the dispatch of each attempt to its kind's sender.

use serde_json::{Map, Value};

use super::kind::{Kind, Parsed};
use crate::kinds::{Read, Refusal};

/// One line per kind: `Variant = "name" => module::Kind`.
macro_rules! registry {
    ($($variant:ident = $name:literal => $kind:ty),+ $(,)?) => {
        /// A destination other than HTTP, without its credentials: what the API takes and
        /// shows, stored as JSON with its `type`.
        #[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
        #[serde(tag = "type")]
        pub(crate) enum Spec {
            $( #[serde(rename = $name)] $variant(<$kind as $crate::destinations::kind::Kind>::Spec), )+
        }

        /// Every kind's name and field table, in the registry's order.
        pub(crate) const KINDS: &[(&str, &$crate::kinds::Table)] = &[ $( ($name, &<$kind as $crate::destinations::kind::Kind>::TABLE), )+ ];

        impl Spec {
            /// Its kind, as `type` names it and metrics label it.
            pub(crate) fn kind(&self) -> &'static str {
                match self { $( Spec::$variant(_) => $name, )+ }
            }

            /// Its address as the webhook's `url` shows it (no credentials).
            pub(crate) fn address(&self) -> &str {
                match self { $( Spec::$variant(s) => <$kind as $crate::destinations::kind::Kind>::address(s), )+ }
            }

            /// Where it is sent inside the system (`messaging.destination.name`).
            pub(crate) fn target(&self) -> &str {
                match self { $( Spec::$variant(s) => <$kind as $crate::destinations::kind::Kind>::target(s), )+ }
            }

            /// The host it connects to, and the field that names it (the tests read it;
            /// saving checks [`Spec::hosts`]).
            #[cfg(test)]
            pub(crate) fn host(&self) -> $crate::destinations::kind::Host {
                match self { $( Spec::$variant(s) => <$kind as $crate::destinations::kind::Kind>::host(s), )+ }
            }

            /// Every host it names, each checked when saved.
            pub(crate) fn hosts(&self) -> Vec<$crate::destinations::kind::Host> {
                match self { $( Spec::$variant(s) => <$kind as $crate::destinations::kind::Kind>::hosts(s), )+ }
            }

            /// `messaging.system` (spans).
            pub(crate) fn system(&self) -> &'static str {
                match self { $( Spec::$variant(_) => <$kind as $crate::destinations::kind::Kind>::SYSTEM, )+ }
            }

            /// Reads an object of the kind called `name` (`None`: no such kind).
            pub(crate) fn read(
                name: &str,
                object: &serde_json::Map<String, serde_json::Value>,
            ) -> Option<Result<$crate::destinations::kind::Parsed<Spec>, $crate::kinds::Refusal>> {
                match name {
                    $( $name => Some($crate::destinations::registry::read::<$kind>(name, object)
                        .map(|p| $crate::destinations::kind::Parsed { spec: Spec::$variant(p.spec), credentials: p.credentials })), )+
                    _ => None,
                }
            }
        }

        /// The senders of every kind in one process, each made once.
        #[allow(non_snake_case, reason = "one field per kind, named as its variant")]
        pub(crate) struct Senders {
            $( $variant: <$kind as $crate::destinations::kind::Kind>::Sender, )+
        }

        impl Senders {
            pub(crate) fn new(parts: &$crate::destinations::kind::SenderParts) -> Senders {
                Senders { $( $variant: <$kind as $crate::destinations::kind::Kind>::sender(parts), )+ }
            }

            /// Sends `message` to the destination `spec` names. (Each kind's future is
            /// boxed: inline, the largest would make every attempt's task that large.)
            pub(crate) async fn send(
                &self,
                spec: &Spec,
                sealed: Option<$crate::destinations::kind::Sealed<'_>>,
                message: $crate::destinations::message::Message<'_>,
            ) -> Result<$crate::destinations::message::Answer, $crate::destinations::message::SendError> {
                match spec {
                    $( Spec::$variant(s) => Box::pin(<$kind as $crate::destinations::kind::Kind>::send(&self.$variant, $crate::destinations::kind::To { spec: s, sealed }, message)).await, )+
                }
            }
        }
    };
}

pub(crate) use registry;

/// Reads an object against kind `K`'s table, then as `K` reads it.
pub(crate) fn read<K: Kind>(name: &str, object: &Map<String, Value>) -> Result<Parsed<K::Spec>, Refusal> {
    let article = if name.starts_with(['a', 'e', 'i', 'o', 'u']) { "an" } else { "a" };
    let read = Read::of(&K::TABLE, &format!("{article} {name} destination"), "destination", object)?;
    K::parse(&read)
}

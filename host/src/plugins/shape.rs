//! The shape of an upload, read before anything is compiled: a component (not a core
//! module), whose own imports are all ones Weir may satisfy (`weir:plugin/*`, `wasi:*`: see
//! `link`) and which exports the world's `handle` function. Reading the sections costs
//! microseconds where compiling costs seconds, so an upload that could never be a plugin is
//! refused before it takes any of the compile budget. (The types are checked once compiled,
//! when the plugin is linked: `compile`.)

use wasmparser::{ComponentExternalKind, Parser, Payload};

use super::link::ValidationError;

/// The world's one export.
const HANDLE: &str = "handle";

/// Checks the shape of `wasm` (see the module's rules).
pub(super) fn check(wasm: &[u8]) -> Result<(), ValidationError> {
    if wasm.len() >= 8 && wasm[..4] == *b"\0asm" && wasm[4..8] == [1, 0, 0, 0] {
        return Err(ValidationError::NotComponent(
            "this is a core WebAssembly module; build a component (target wasm32-wasip2)".into(),
        ));
    }
    let mut depth = 0usize;
    let mut component = false;
    let mut exports_handle = false;
    for payload in Parser::new(0).parse_all(wasm) {
        let payload = payload.map_err(|e| ValidationError::NotComponent(e.message().to_owned()))?;
        match payload {
            Payload::Version { encoding, .. } if depth == 0 => {
                component = encoding == wasmparser::Encoding::Component;
                if !component {
                    return Err(ValidationError::NotComponent("not a component".into()));
                }
            }
            Payload::ModuleSection { .. } | Payload::ComponentSection { .. } => depth += 1,
            Payload::End(_) => depth = depth.saturating_sub(1),
            Payload::ComponentImportSection(imports) if depth == 0 => {
                for import in imports {
                    let import = import.map_err(|e| ValidationError::NotComponent(e.message().to_owned()))?;
                    let name = import.name.name;
                    // A world's `use` imports type names (`event`): nothing to provide.
                    let a_type = matches!(import.ty, wasmparser::ComponentTypeRef::Type(_));
                    if !(a_type || name.starts_with("weir:plugin/") || name.starts_with("wasi:")) {
                        return Err(ValidationError::UnsupportedImport(name.to_owned()));
                    }
                }
            }
            Payload::ComponentExportSection(exports) if depth == 0 => {
                for export in exports {
                    let export = export.map_err(|e| ValidationError::NotComponent(e.message().to_owned()))?;
                    if export.name.name == HANDLE && export.kind == ComponentExternalKind::Func {
                        exports_handle = true;
                    }
                }
            }
            _ => {}
        }
    }
    if !component {
        return Err(ValidationError::NotComponent("empty".into()));
    }
    if !exports_handle {
        return Err(ValidationError::WrongWorld(format!(
            "it exports no `{HANDLE}` function (build it against the `filter` world of wit/)"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_not_a_component_of_the_world_is_refused_before_compiling() {
        let core = b"\0asm\x01\x00\x00\x00";
        assert!(matches!(check(core), Err(ValidationError::NotComponent(m)) if m.contains("core WebAssembly")));
        assert!(matches!(check(b"hello"), Err(ValidationError::NotComponent(_))));
        assert!(matches!(check(b""), Err(ValidationError::NotComponent(_))));
        // An empty component: the right encoding, but no `handle`.
        let empty = b"\0asm\x0d\x00\x01\x00";
        assert!(
            matches!(check(empty), Err(ValidationError::WrongWorld(m)) if m.contains("handle")),
            "{:?}",
            check(empty)
        );
    }
}

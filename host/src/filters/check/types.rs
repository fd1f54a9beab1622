//! Types, as far as a filter's text tells them: literals have theirs, what comes from the
//! event may be anything (`Dyn`). An operation on types it can never take — `size(1)`,
//! `1 + "a"`, `!1` — is refused when the filter is saved, as is a filter whose value can
//! never be a boolean: it could never select anything.

use super::bound::Ty;

const NUMBERS: &[Ty] = &[Ty::Int, Ty::Uint, Ty::Double];
const SIZED: &[Ty] = &[Ty::String, Ty::Bytes, Ty::List, Ty::Map];

/// The type of `name` applied to arguments of `args`' types (a receiver first), or why it
/// never applies.
pub(super) fn of_call(name: &str, args: &[Ty]) -> Result<Ty, String> {
    let arg = |i: usize| args.get(i).copied().unwrap_or(Ty::Dyn);
    let expect = |i: usize, allowed: &[Ty], what: &str| -> Result<(), String> {
        if arg(i).may_be(allowed) {
            Ok(())
        } else {
            Err(format!("`{}` takes {what}, not {}", shown(name), arg(i).name()))
        }
    };
    match name {
        "_==_" | "_!=_" | "@not_strictly_false" => Ok(Ty::Bool),
        "_<_" | "_<=_" | "_>_" | "_>=_" => {
            let (a, b) = (arg(0), arg(1));
            let comparable = a == Ty::Dyn
                || b == Ty::Dyn
                || (a.is_number() && b.is_number())
                || (a == b && matches!(a, Ty::String | Ty::Bytes | Ty::Bool));
            if comparable { Ok(Ty::Bool) } else { Err(format!("cannot compare {} with {}", a.name(), b.name())) }
        }
        "_&&_" | "_||_" | "!_" => {
            for i in 0..args.len() {
                expect(i, &[Ty::Bool], "booleans")?;
            }
            Ok(Ty::Bool)
        }
        "-_" => {
            expect(0, &[Ty::Int, Ty::Double], "a number")?;
            Ok(arg(0))
        }
        "_+_" | "_-_" | "_*_" | "_/_" | "_%_" => arithmetic(name, arg(0), arg(1)),
        "_?_:_" => {
            expect(0, &[Ty::Bool], "a boolean condition")?;
            Ok(if arg(1) == arg(2) { arg(1) } else { Ty::Dyn })
        }
        "_[_]" => {
            expect(0, &[Ty::List, Ty::Map], "a list or a map to index")?;
            Ok(Ty::Dyn)
        }
        "@in" => {
            expect(1, &[Ty::List, Ty::Map], "a list or a map on its right")?;
            Ok(Ty::Bool)
        }
        "size" => {
            expect(0, SIZED, "a string, bytes, a list or a map")?;
            Ok(Ty::Int)
        }
        "contains" | "startsWith" | "endsWith" | "matches" => {
            expect(0, &[Ty::String], "a string")?;
            expect(1, &[Ty::String], "a string")?;
            Ok(Ty::Bool)
        }
        "int" | "uint" | "double" => {
            expect(0, &[Ty::Int, Ty::Uint, Ty::Double, Ty::String], "a number or a string")?;
            Ok(match name {
                "int" => Ty::Int,
                "uint" => Ty::Uint,
                _ => Ty::Double,
            })
        }
        "string" => {
            expect(0, &[Ty::Int, Ty::Uint, Ty::Double, Ty::String, Ty::Bytes, Ty::Bool], "a scalar")?;
            Ok(Ty::String)
        }
        _ => Ok(Ty::Dyn),
    }
}

fn arithmetic(name: &str, a: Ty, b: Ty) -> Result<Ty, String> {
    let allowed: &[Ty] = match name {
        "_+_" => &[Ty::Int, Ty::Uint, Ty::Double, Ty::String, Ty::Bytes, Ty::List],
        "_%_" => &[Ty::Int, Ty::Uint],
        _ => NUMBERS,
    };
    for t in [a, b] {
        if !t.may_be(allowed) {
            return Err(format!("`{}` does not apply to {}", shown(name), t.name()));
        }
    }
    match (a, b) {
        // A value of the event beside a known type can only be of that type, or fail.
        (Ty::Dyn, other) | (other, Ty::Dyn) => Ok(other),
        (a, b) if a == b => Ok(a),
        (a, b) => Err(format!(
            "`{}` does not apply to {} and {} (convert one with int(), double()…)",
            shown(name),
            a.name(),
            b.name()
        )),
    }
}

/// An operator as written.
fn shown(name: &str) -> &str {
    match name {
        "_<_" => "<",
        "_<=_" => "<=",
        "_>_" => ">",
        "_>=_" => ">=",
        "_&&_" => "&&",
        "_||_" => "||",
        "!_" => "!",
        "-_" | "_-_" => "-",
        "_+_" => "+",
        "_*_" => "*",
        "_/_" => "/",
        "_%_" => "%",
        "_?_:_" => "?:",
        "_[_]" => "[]",
        "@in" => "in",
        other => other,
    }
}

/// Why a filter's value could never select: `None` when it may be `true`.
pub(super) fn never_selects(ty: Ty) -> Option<String> {
    (!ty.may_be(&[Ty::Bool])).then(|| format!("a filter must be true or false; this one is {}", ty.name()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_never_applies_is_named_and_what_may_apply_passes() {
        assert!(of_call("size", &[Ty::Int]).unwrap_err().contains("not an int"));
        assert!(of_call("_+_", &[Ty::Int, Ty::String]).is_err());
        assert!(of_call("!_", &[Ty::Int]).unwrap_err().contains("booleans"));
        assert!(of_call("_<_", &[Ty::String, Ty::Int]).is_err());
        assert_eq!(of_call("_<_", &[Ty::Int, Ty::Double]), Ok(Ty::Bool));
        assert_eq!(of_call("_+_", &[Ty::Dyn, Ty::Int]), Ok(Ty::Int));
        assert_eq!(of_call("_+_", &[Ty::Dyn, Ty::Dyn]), Ok(Ty::Dyn));
        assert_eq!(of_call("_*_", &[Ty::Dyn, Ty::Int]), Ok(Ty::Int));
        assert_eq!(of_call("size", &[Ty::Dyn]), Ok(Ty::Int));
        assert_eq!(never_selects(Ty::Int).as_deref(), Some("a filter must be true or false; this one is an int"));
        assert_eq!(never_selects(Ty::Dyn), None);
    }
}

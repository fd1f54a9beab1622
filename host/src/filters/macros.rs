//! CEL's macros (`has`, `all`, `exists`, `exists_one`, `map`, `filter`), expanded as the
//! standard library does, with one difference: each iteration's work goes through
//! [`TICK`], the identity, so that the meter (`super::meter`) counts iterations and ends an
//! evaluation at its deadline however the loops nest. `@tick` cannot be written in a
//! filter (CEL names cannot start with `@`): only these expansions call it.
//!
//! The shapes are the interpreter's own fast paths: `@result && x` / `@result || x` for
//! `all` / `exists` (errors deferred as cel-go does), `@result + [x]` for `map` and
//! `filter` (appended in place), so wrapping `x` keeps both.

use cel::Env;
use cel::common::ast::{CallExpr, ComprehensionExpr, Expr, IdedExpr, ListExpr, LiteralValue, operators};
use cel::parser::Macro;
use cel::parser::{MacroExprHelper, ParseError};

/// The function every macro iteration calls: the identity, counted.
pub(super) const TICK: &str = "@tick";
/// The accumulator's name in every expansion.
const ACCU: &str = "@result";

/// Adds the macros to `env` (one without the standard ones).
pub(super) fn add(env: &mut Env) {
    let macros = [
        Macro::global(operators::HAS, 1, |h, _, args| has(h, args).map(Some)),
        Macro::receiver(operators::ALL, 2, |h, t, args| fold(h, t, args, Fold::All).map(Some)),
        Macro::receiver(operators::EXISTS, 2, |h, t, args| fold(h, t, args, Fold::Exists).map(Some)),
        Macro::receiver(operators::EXISTS_ONE, 2, |h, t, args| fold(h, t, args, Fold::ExistsOne).map(Some)),
        Macro::receiver("existsOne", 2, |h, t, args| fold(h, t, args, Fold::ExistsOne).map(Some)),
        Macro::receiver(operators::MAP, 2, |h, t, args| fold(h, t, args, Fold::Map).map(Some)),
        Macro::receiver(operators::MAP, 3, |h, t, args| fold(h, t, args, Fold::MapWhere).map(Some)),
        Macro::receiver(operators::FILTER, 2, |h, t, args| fold(h, t, args, Fold::Filter).map(Some)),
    ];
    for m in macros {
        // Added once to an environment without macros: no duplicate is possible.
        let _ = env.add_macro(m);
    }
}

/// `has(a.b)`: the selection, tested for presence.
fn has(h: &mut MacroExprHelper<'_>, args: &mut Vec<IdedExpr>) -> Result<IdedExpr, ParseError> {
    let arg = args.remove(0);
    match arg.expr {
        Expr::Select(mut select) => {
            select.test = true;
            Ok(h.next_expr(Expr::Select(select)))
        }
        _ => Err(h.new_error(arg.id, "has() takes a field selection, as in has(a.b)")),
    }
}

#[derive(Debug, Clone, Copy)]
enum Fold {
    All,
    Exists,
    ExistsOne,
    Map,
    /// `map(v, predicate, f)`.
    MapWhere,
    Filter,
}

/// `range.macro(v, …)` as a comprehension whose every iteration calls [`TICK`].
fn fold(
    h: &mut MacroExprHelper<'_>,
    target: &mut Option<IdedExpr>,
    args: &mut Vec<IdedExpr>,
    fold: Fold,
) -> Result<IdedExpr, ParseError> {
    let var = args.remove(0);
    let iter_var = match &var.expr {
        Expr::Ident(name) => name.clone(),
        _ => return Err(h.new_error(var.id, "a macro's first argument must be a simple name")),
    };
    let body = args.pop().unwrap_or_default();
    let guard = args.pop();
    let (Some(iter_range), body) = (target.take(), body) else {
        return Err(h.new_error(var.id, "a macro needs a list or a map to go through"));
    };
    let accu = |h: &mut MacroExprHelper<'_>| h.next_expr(Expr::Ident(ACCU.to_owned()));
    let call = |h: &mut MacroExprHelper<'_>, name: &str, args: Vec<IdedExpr>| {
        h.next_expr(Expr::Call(CallExpr { func_name: name.to_owned(), target: None, args }))
    };
    let literal = |h: &mut MacroExprHelper<'_>, value: LiteralValue| h.next_expr(Expr::Literal(value));
    let ticked = |h: &mut MacroExprHelper<'_>, e: IdedExpr| call(h, TICK, vec![e]);
    let empty_list = |h: &mut MacroExprHelper<'_>| h.next_expr(Expr::List(ListExpr::new(Vec::new())));
    let append = |h: &mut MacroExprHelper<'_>, item: IdedExpr| {
        let (a, list) = (accu(h), h.next_expr(Expr::List(ListExpr::new(vec![item]))));
        call(h, operators::ADD, vec![a, list])
    };
    let (init, cond, step, result) = match fold {
        Fold::All | Fold::Exists => {
            let all = matches!(fold, Fold::All);
            let init = literal(h, LiteralValue::Boolean(all.into()));
            let a = accu(h);
            let going = if all { a } else { call(h, operators::LOGICAL_NOT, vec![a]) };
            let cond = call(h, operators::NOT_STRICTLY_FALSE, vec![going]);
            let (a, x) = (accu(h), ticked(h, body));
            let step = call(h, if all { operators::LOGICAL_AND } else { operators::LOGICAL_OR }, vec![a, x]);
            (init, cond, step, accu(h))
        }
        Fold::ExistsOne => {
            let init = literal(h, LiteralValue::Int(0.into()));
            let cond = literal(h, LiteralValue::Boolean(true.into()));
            let (x, a, one) = (ticked(h, body), accu(h), literal(h, LiteralValue::Int(1.into())));
            let counted = call(h, operators::ADD, vec![a, one]);
            let unchanged = accu(h);
            let step = call(h, operators::CONDITIONAL, vec![x, counted, unchanged]);
            let (a, one) = (accu(h), literal(h, LiteralValue::Int(1.into())));
            (init, cond, step, call(h, operators::EQUALS, vec![a, one]))
        }
        Fold::Map | Fold::MapWhere | Fold::Filter => {
            let init = empty_list(h);
            let cond = literal(h, LiteralValue::Boolean(true.into()));
            let step = match (fold, guard) {
                (Fold::Map, _) => {
                    let x = ticked(h, body);
                    append(h, x)
                }
                (Fold::MapWhere, Some(guard)) => {
                    let (g, appended, unchanged) = (ticked(h, guard), append(h, body), accu(h));
                    call(h, operators::CONDITIONAL, vec![g, appended, unchanged])
                }
                _ => {
                    let (g, appended, unchanged) = (ticked(h, body), append(h, var), accu(h));
                    call(h, operators::CONDITIONAL, vec![g, appended, unchanged])
                }
            };
            (init, cond, step, accu(h))
        }
    };
    Ok(h.next_expr(Expr::Comprehension(Box::new(ComprehensionExpr {
        iter_range,
        iter_var,
        iter_var2: None,
        accu_var: ACCU.to_owned(),
        accu_init: init,
        loop_cond: cond,
        loop_step: step,
        result,
    }))))
}

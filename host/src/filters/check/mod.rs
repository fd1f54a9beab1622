//! What a filter may say, and a bound on how long its evaluation can take, found before it
//! is accepted.
//!
//! Names: the envelope's variables (`id`, `action`, `created_at`, `organisation`,
//! `creator`, `subject`, every snapshot key of the catalogue, and `event`) and the
//! variables of its own macros. Functions: CEL's operators, `size`, `contains`,
//! `startsWith`, `endsWith`, `matches` (its pattern a string literal of at most
//! [`MAX_PATTERN`] bytes), `int`, `uint`, `double`, `string`, and the macros `has`, `all`,
//! `exists`, `exists_one`, `map` and `filter`. Types: what can never apply (`size(1)`,
//! `1 + "a"`) or never select (`1`) is refused (`types`).
//!
//! The bound, in estimated nanoseconds (`bound`): every value taken from the event is at
//! most [`EVENT_BOUND`] bytes (the body limit) and holds at most
//! [`MAX_MACRO_ELEMENTS`] elements (past that, macros are not evaluated). Each
//! expression gets bounds on its value's size, on the elements it holds and on its time,
//! all *linear in the element* the innermost macro is at: over a range whose elements'
//! sizes add up to `R` bytes and `E` elements, a body costing `a + b·x + c·n(x)` for an
//! element of `x` bytes holding `n(x)` elements costs at most `(a + c)·E + b·R` in all.
//! Nested macros over the same event multiply (each loop is counted); a macro over its own
//! element's parts does not. A filter whose bound passes [`COST_BUDGET`], or whose values
//! may grow past [`SIZE_BUDGET`], is refused, naming where the cost comes from.

mod bound;
mod types;

use std::sync::Arc;

use cel::common::ast::{ComprehensionExpr, EntryExpr, Expr, LiteralValue};
use cel::parser::Expression;

use self::bound::*;
use super::error::FilterError;
use super::macros::TICK;
use super::meter::{Pattern, Patterns};

/// The most elements (of lists, and entries of objects, in all) an event may hold for a
/// filter with macros to be evaluated on it (the bound counts each macro's iterations up to
/// it); on a larger event such a filter does not select it (an evaluation error).
pub const MAX_MACRO_ELEMENTS: usize = 20_000;
/// The largest value an event can hold, in bytes: its body limit.
pub const EVENT_BOUND: u64 = 1 << 20;
/// The longest an admitted filter may take on the largest event, estimated (ns): the
/// estimates run about twice the measured time (the bench's calibration table), so the
/// costliest admitted filters take 10–20 ms on the bench machine, well inside the
/// evaluation's deadline ([`super::TIME_LIMIT`]) even on a machine twice as slow.
pub const COST_BUDGET: u64 = 30_000_000;
/// The largest value an evaluation may build.
const SIZE_BUDGET: u64 = 4 * EVENT_BOUND;
/// The longest pattern `matches` takes.
pub const MAX_PATTERN: usize = 256;

/// What the check found of an accepted filter.
pub(super) struct Checked {
    /// The bound on an evaluation's time, estimated (ns).
    pub(super) cost: u64,
    /// Whether it has macros (which go through lists one element at a time).
    pub(super) macros: bool,
    /// Its `matches` patterns, compiled.
    pub(super) patterns: Patterns,
}

/// What a name stands for where it is used: a value of these bounds.
#[derive(Debug, Clone, Copy)]
struct Name {
    size: Lin,
    elems: Lin,
    ty: Ty,
}

struct Checker<'a> {
    program: &'a cel::Program,
    source: &'a str,
    /// Names in scope, innermost last.
    names: Vec<(String, Name)>,
    /// The largest element the innermost macro can be at (nothing outside any).
    element: Element,
    macros: bool,
    patterns: Patterns,
}

/// Checks a compiled filter (see the module's documentation).
pub(super) fn check(program: &cel::Program, source: &str) -> Result<Checked, FilterError> {
    let event = Name { size: Lin::of(EVENT_BOUND), elems: Lin::of(MAX_MACRO_ELEMENTS as u64), ty: Ty::Dyn };
    let mut names: Vec<(String, Name)> = variables().iter().map(|n| (n.to_string(), event)).collect();
    names.push(("event".to_owned(), event));
    let mut checker =
        Checker { program, source, names, element: Element::default(), macros: false, patterns: Patterns::new() };
    let root = program.expression();
    let bound = checker.walk(root)?;
    if let Some(why) = types::never_selects(bound.ty) {
        return Err(checker.fault(root, why));
    }
    let mut cost = bound.cost.at_most(Element::default());
    if program.references().has_variable("event") {
        let elements = MAX_MACRO_ELEMENTS as u64;
        cost = cost.saturating_add(EVENT_BOUND * WHOLE_BYTE_NS + elements * WHOLE_ELEMENT_NS);
    }
    if cost > COST_BUDGET {
        return Err(checker.fault(root, too_costly(cost)));
    }
    Ok(Checked { cost, macros: checker.macros, patterns: checker.patterns })
}

fn too_costly(cost: u64) -> String {
    format!(
        "may take too long on a large event (about {} ms; at most {} ms are allowed): a macro goes through the \
         event's lists, or lists of its own, inside another, or compares or builds something large for each element",
        cost.div_ceil(1_000_000),
        COST_BUDGET / 1_000_000
    )
}

impl Checker<'_> {
    fn fault(&self, at: &Expression, message: impl Into<String>) -> FilterError {
        let offset = self.program.source_info().offset_for(at.id).map(|(start, _)| start as usize);
        FilterError { at: offset.map(|o| line_column(self.source, o)), message: message.into() }
    }

    fn name(&self, name: &str) -> Option<Name> {
        self.names.iter().rev().find(|(n, _)| n == name).map(|(_, k)| *k)
    }

    fn walk(&mut self, e: &Expression) -> Result<Bound, FilterError> {
        let step = Lin::of(STEP_NS);
        let bound = match &e.expr {
            Expr::Literal(literal) => {
                let (ty, size) = match literal {
                    LiteralValue::String(s) => (Ty::String, s.inner().len() as u64),
                    LiteralValue::Bytes(b) => (Ty::Bytes, b.inner().len() as u64),
                    LiteralValue::Boolean(_) => (Ty::Bool, 1),
                    LiteralValue::Int(_) => (Ty::Int, 8),
                    LiteralValue::UInt(_) => (Ty::Uint, 8),
                    LiteralValue::Double(_) => (Ty::Double, 8),
                    LiteralValue::Null => (Ty::Null, 1),
                };
                Bound::scalar(ty, size, step)
            }
            Expr::Ident(name) => match self.name(name) {
                Some(n) => Bound { size: n.size, elems: n.elems, cost: step, ty: n.ty },
                None => return Err(self.fault(e, format!("unknown name `{name}`: {}", known_names()))),
            },
            Expr::Select(select) => {
                let operand = self.walk(&select.operand)?;
                if !operand.ty.may_be(&[Ty::Map]) {
                    return Err(
                        self.fault(e, format!("`.{}` reads a field of a map, not {}", select.field, operand.ty.name()))
                    );
                }
                let ty = if select.test { Ty::Bool } else { Ty::Dyn };
                Bound { ty, cost: operand.cost.plus(step), ..operand }
            }
            Expr::List(list) => {
                let k = list.elements.len() as u64;
                let mut bound = Bound { size: Lin::of(k), elems: Lin::of(k), cost: step, ty: Ty::List };
                for element in &list.elements {
                    let b = self.walk(element)?;
                    bound.size = bound.size.plus(b.size).plus(Lin::of(1));
                    bound.elems = bound.elems.plus(b.elems);
                    bound.cost = bound.cost.plus(b.cost);
                }
                bound
            }
            Expr::Map(map) => self.map_literal(e, map)?,
            Expr::Struct(_) => return Err(self.fault(e, "messages (typed structs) are not supported")),
            Expr::Unspecified => return Err(self.fault(e, "an empty expression")),
            Expr::Call(call) => {
                let mut args = Vec::with_capacity(call.args.len() + 1);
                if let Some(target) = &call.target {
                    args.push(self.walk(target)?);
                }
                for arg in &call.args {
                    args.push(self.walk(arg)?);
                }
                let tys: Vec<Ty> = args.iter().map(|a| a.ty).collect();
                let ty = types::of_call(&call.func_name, &tys).map_err(|why| self.fault(e, why))?;
                self.call(e, &call.func_name, &call.args, &args, ty)?
            }
            Expr::Comprehension(c) => self.comprehension(e, c)?,
        };
        if bound.size.at_most(self.element) > SIZE_BUDGET {
            return Err(self.fault(
                e,
                "may build too large a value on a large event (strings or lists joined from the event over and over)",
            ));
        }
        let cost = bound.cost.at_most(self.element);
        if cost > COST_BUDGET {
            return Err(self.fault(e, too_costly(cost)));
        }
        Ok(bound)
    }

    /// A map literal: its keys and values, each key compared as it is inserted.
    fn map_literal(&mut self, e: &Expression, map: &cel::common::ast::MapExpr) -> Result<Bound, FilterError> {
        let k = map.entries.len() as u64;
        let mut bound = Bound { size: Lin::of(k), elems: Lin::of(k), cost: Lin::of(STEP_NS), ty: Ty::Map };
        for entry in &map.entries {
            let EntryExpr::MapEntry(entry) = &entry.expr else {
                return Err(self.fault(e, "a map literal holds key: value pairs only"));
            };
            let (key, value) = (self.walk(&entry.key)?, self.walk(&entry.value)?);
            bound.size = bound.size.plus(key.size).plus(value.size).plus(Lin::of(1));
            bound.elems = bound.elems.plus(value.elems);
            bound.cost = bound.cost.plus(key.cost).plus(value.cost).plus(key.size.times(BYTE_NS));
        }
        Ok(bound)
    }

    /// A call of `name` on `args` (a receiver first) of type `ty`.
    fn call(
        &mut self,
        e: &Expression,
        name: &str,
        written: &[Expression],
        args: &[Bound],
        ty: Ty,
    ) -> Result<Bound, FilterError> {
        let cost = args.iter().fold(Lin::of(STEP_NS), |c, a| c.plus(a.cost));
        let size = |i: usize| args.get(i).map_or(Lin::default(), |a| a.size);
        let elems = |i: usize| args.get(i).map_or(Lin::default(), |a| a.elems);
        let bytes = |l: Lin| l.times(BYTE_NS);
        let value = |size: u64, cost: Lin| Bound::scalar(ty, size, cost);
        let bound = match (name, args.len()) {
            ("_==_" | "_!=_" | "_<_" | "_<=_" | "_>_" | "_>=_", 2) => {
                value(1, cost.plus(bytes(size(0).min(size(1)))).plus(elems(0).min(elems(1)).times(STEP_NS)))
            }
            ("_&&_" | "_||_" | "!_" | "@not_strictly_false", _) => value(1, cost),
            ("_-_" | "_*_" | "_/_" | "_%_" | "-_", _) => value(8, cost),
            ("_+_", 2) if ty.is_number() => value(8, cost),
            ("_+_", 2) => {
                let (size, elems) = (size(0).plus(size(1)), elems(0).plus(elems(1)));
                Bound { size, elems, cost: cost.plus(bytes(size)).plus(elems.times(STEP_NS)), ty }
            }
            ("_?_:_", 3) => Bound {
                size: size(1).max(size(2)),
                elems: elems(1).max(elems(2)),
                cost: Lin::of(STEP_NS).plus(args[0].cost).plus(args[1].cost.max(args[2].cost)),
                ty,
            },
            ("_[_]", 2) => Bound { cost, ty, ..args[0] },
            ("@in", 2) => value(1, cost.plus(bytes(size(1))).plus(elems(1).times(STEP_NS))),
            ("size", 1) => value(8, cost.plus(bytes(size(0)))),
            ("contains" | "startsWith" | "endsWith", 2) => value(1, cost.plus(bytes(size(0).plus(size(1))))),
            ("matches", 2) => {
                self.pattern(e, written.last())?;
                value(1, cost.plus(size(0).times(REGEX_BYTE_NS)).plus(Lin::of(REGEX_SETUP_NS)))
            }
            ("int" | "uint" | "double" | "string", 1) => {
                Bound { size: size(0).plus(Lin::of(32)), elems: Lin::default(), cost: cost.plus(bytes(size(0))), ty }
            }
            (TICK, 1) => Bound { cost: cost.plus(Lin::of(ITER_NS)), ..args[0] },
            (name, arity) => {
                return Err(
                    self.fault(e, format!("unknown function `{name}` (with {arity} arguments): {}", known_functions()))
                );
            }
        };
        Ok(bound)
    }

    /// A `matches` pattern: a string literal, compiled once for every evaluation.
    fn pattern(&mut self, e: &Expression, written: Option<&Expression>) -> Result<(), FilterError> {
        let pattern = written.and_then(|p| match &p.expr {
            Expr::Literal(LiteralValue::String(s)) => Some(s.inner().to_owned()),
            _ => None,
        });
        let Some(pattern) = pattern.filter(|p| p.len() <= MAX_PATTERN) else {
            let why = format!("matches() takes a pattern written as a string of at most {MAX_PATTERN} bytes");
            return Err(self.fault(e, why));
        };
        if !self.patterns.contains_key(&pattern) {
            let compiled = Pattern::compile(&pattern).map_err(|why| self.fault(e, format!("matches(): {why}")))?;
            self.patterns.insert(pattern, Arc::new(compiled));
        }
        Ok(())
    }

    /// A macro: its range, then its body once per element (see the module's documentation).
    fn comprehension(&mut self, e: &Expression, c: &ComprehensionExpr) -> Result<Bound, FilterError> {
        if c.iter_var2.is_some() {
            return Err(self.fault(e, "macros with two variables are not supported"));
        }
        self.macros = true;
        let range = self.walk(&c.iter_range)?;
        if !range.ty.may_be(&[Ty::List, Ty::Map]) {
            return Err(self.fault(e, format!("a macro goes through a list or a map, not {}", range.ty.name())));
        }
        let init = self.walk(&c.accu_init)?;
        // Inside, the enclosing names are at their largest; the element is at most the
        // range's size and holds at most its elements; the accumulator is a boolean or a
        // count (`all`, `exists`, `exists_one`) or, for `map` and `filter`, a list appended
        // to in place that the body never reads.
        let outer = self.element;
        let enclosing = self.names.clone();
        for (_, name) in self.names.iter_mut() {
            name.size = Lin::of(name.size.at_most(outer));
            name.elems = Lin::of(name.elems.at_most(outer));
        }
        let appends = init.ty == Ty::List;
        let accu = if appends {
            Name { size: Lin::of(1), elems: Lin::default(), ty: Ty::List }
        } else {
            Name { size: Lin::of(init.size.at_most(outer)).plus(Lin::of(16)), elems: Lin::default(), ty: init.ty }
        };
        let element = Name { size: Lin::ELEMENT_BYTES, elems: Lin::ELEMENT_ELEMS, ty: Ty::Dyn };
        self.names.push((c.iter_var.clone(), element));
        self.names.push((c.accu_var.clone(), accu));
        self.element = Element { bytes: range.size.at_most(outer), elems: range.elems.at_most(outer) };
        let steps = self.walk(&c.loop_cond).and_then(|cond| Ok((cond, self.walk(&c.loop_step)?)));
        let result = self.walk(&c.result);
        self.element = outer;
        self.names = enclosing;
        let ((cond, step), result) = (steps?, result?);
        let body = Lin::over(&range, cond.cost.plus(step.cost));
        // What `map` and `filter` build: each element's value (the step less the
        // accumulator), likewise.
        let each = Lin { fixed: step.size.fixed.saturating_sub(accu.size.fixed).saturating_add(2), ..step.size };
        let (size, elems) = if appends {
            (Lin::over(&range, each), Lin::over(&range, step.elems))
        } else {
            (result.size, result.elems)
        };
        Ok(Bound {
            size: size.max(init.size),
            elems,
            cost: range.cost.plus(init.cost).plus(body).plus(result.cost),
            ty: result.ty,
        })
    }
}

/// Line and column (from 1) of byte `offset` of `source`.
fn line_column(source: &str, offset: usize) -> (usize, usize) {
    let mut end = offset.min(source.len());
    while !source.is_char_boundary(end) {
        end -= 1;
    }
    let before = &source[..end];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

fn known_names() -> String {
    let mut names = variables();
    names.push("event");
    format!("a filter reads the event's envelope: {}", names.join(", "))
}

fn known_functions() -> &'static str {
    "filters may use CEL's operators, size, contains, startsWith, endsWith, matches, int, uint, double, string, \
     has, all, exists, exists_one, map and filter"
}

/// The envelope's top-level keys: the variables a filter may name (besides `event`).
pub(super) fn variables() -> Vec<&'static str> {
    let mut names = vec!["id", "action", "created_at", "organisation", "creator", "subject"];
    names.extend(crate::catalog::SNAPSHOT_KEYS);
    names.extend(crate::catalog::OPERATIONAL_SNAPSHOT_KEYS);
    names
}

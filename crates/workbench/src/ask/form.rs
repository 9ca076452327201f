//! The form of an elicitation: one input per field of the requested schema
//! (text with its format, number, integer, yes/no, a choice among titled
//! values), defaults filled in, and the answer checked field by field and
//! as a whole before it may be sent. A failed check keeps every typed text
//! and puts the message next to its field.

use serde_json::{Map, Value};

use pipewright_engine::mcp::human::{self, Ask, Field, FieldKind, Reply};

use super::text::TextInput;

/// What a field's input holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// Typed text (text, number and integer fields).
    Text(TextInput),
    /// A yes/no field: Space flips it.
    Toggle(bool),
    /// The index of the chosen value, `None` until one is chosen.
    Choice(Option<usize>),
}

/// A form being filled in.
#[derive(Debug, Clone, PartialEq)]
pub struct Form {
    pub schema: Value,
    pub fields: Vec<Field>,
    pub inputs: Vec<Input>,
    /// Per field, why its value does not fit (shown under it).
    pub errors: Vec<Option<String>>,
    /// A problem with the whole answer that names no field.
    pub error: Option<String>,
    /// The field with the keys.
    pub focus: usize,
}

impl Form {
    /// The form for a requested schema, defaults filled in.
    pub fn new(schema: &Value) -> Form {
        let fields = human::fields(schema);
        let inputs = fields.iter().map(input_for).collect();
        Form {
            schema: schema.clone(),
            errors: vec![None; fields.len()],
            fields,
            inputs,
            error: None,
            focus: 0,
        }
    }

    /// Whether the focused field takes typed characters.
    pub fn typing(&self) -> bool {
        matches!(self.inputs.get(self.focus), Some(Input::Text(_)))
    }

    /// Moves the focus by `delta` fields, wrapping around.
    pub fn move_focus(&mut self, delta: isize) {
        let n = self.fields.len() as isize;
        if n > 0 {
            self.focus = (self.focus as isize + delta).rem_euclid(n) as usize;
        }
    }

    /// Flips a yes/no field or steps a choice by `delta`; false when the
    /// focused field is neither.
    pub fn choose(&mut self, delta: isize) -> bool {
        let n = match self.fields.get(self.focus).map(|f| &f.kind) {
            Some(FieldKind::Choice { values, .. }) => values.len() as isize,
            _ => 0,
        };
        match self.inputs.get_mut(self.focus) {
            Some(Input::Toggle(b)) => *b = !*b,
            Some(Input::Choice(c)) if n > 0 => {
                *c = Some(match *c {
                    None if delta < 0 => (n - 1) as usize,
                    None => 0,
                    Some(i) => (i as isize + delta).rem_euclid(n) as usize,
                });
            }
            _ => return false,
        }
        self.errors[self.focus] = None;
        true
    }

    /// An editing key for the focused text field; true when it was taken.
    pub fn edit(&mut self, key: crossterm::event::KeyEvent) -> bool {
        match self.inputs.get_mut(self.focus) {
            Some(Input::Text(t)) => {
                let taken = t.key(key);
                if taken {
                    self.errors[self.focus] = None;
                }
                taken
            }
            _ => false,
        }
    }

    /// Pasted text, into the focused text field.
    pub fn paste(&mut self, text: &str) {
        if let Some(Input::Text(t)) = self.inputs.get_mut(self.focus) {
            t.insert(text);
            self.errors[self.focus] = None;
        }
    }

    /// The answer as an object of fields, checked field by field and
    /// against the whole schema. On a problem every message goes next to
    /// its field (the focus moves to the first) and nothing is returned.
    pub fn submit(&mut self) -> Option<Value> {
        self.error = None;
        let mut content = Map::new();
        for (i, (f, input)) in self.fields.iter().zip(&self.inputs).enumerate() {
            self.errors[i] = None;
            let value = match input {
                Input::Text(t) => human::field_value(f, &t.text()),
                Input::Toggle(b) => Ok(Some(Value::Bool(*b))),
                Input::Choice(c) => match (c, &f.kind) {
                    (Some(i), FieldKind::Choice { values, .. }) => {
                        human::field_value(f, &values[*i])
                    }
                    _ => human::field_value(f, ""),
                },
            };
            match value {
                Ok(Some(v)) => {
                    content.insert(f.name.clone(), v);
                }
                Ok(None) => {}
                Err(e) => self.errors[i] = Some(e),
            }
        }
        let content = Value::Object(content);
        // The schema's own rules (minimum, pattern, length …) over the
        // fields that read, so every problem is said at once: a field whose
        // text did not read is not also "required".
        let failed: Vec<&str> = self
            .fields
            .iter()
            .zip(&self.errors)
            .filter(|(_, e)| e.is_some())
            .map(|(f, _)| f.name.as_str())
            .collect();
        let mut schema = self.schema.clone();
        if let Some(required) = schema.get_mut("required").and_then(Value::as_array_mut) {
            required.retain(|n| n.as_str().is_none_or(|n| !failed.contains(&n)));
        }
        for e in human::form_errors(&schema, &content) {
            let at = e.split_once(": ").and_then(|(name, msg)| {
                let i = self.fields.iter().position(|f| f.name == name)?;
                Some((i, msg.to_owned()))
            });
            match at {
                Some((i, msg)) => match &mut self.errors[i] {
                    Some(prev) if !prev.contains(&msg) => *prev = format!("{prev}; {msg}"),
                    Some(_) => {}
                    slot @ None => *slot = Some(msg),
                },
                None => self.error = Some(e),
            }
        }
        if self.errors.iter().all(Option::is_none) && self.error.is_none() {
            let ask = Ask::Form {
                message: String::new(),
                schema: self.schema.clone(),
            };
            let reply = Reply::Accept(content);
            return match human::check_reply(&ask, &reply) {
                Ok(()) => match reply {
                    Reply::Accept(c) => Some(c),
                    _ => None,
                },
                Err(e) => {
                    self.error = Some(e);
                    None
                }
            };
        }
        if let Some(i) = self.errors.iter().position(Option::is_some) {
            self.focus = i;
        }
        None
    }
}

/// A field's input with its default.
fn input_for(f: &Field) -> Input {
    let default = f.default.as_ref();
    match &f.kind {
        FieldKind::Boolean => Input::Toggle(default.and_then(Value::as_bool).unwrap_or(false)),
        FieldKind::Choice { values, .. } => Input::Choice(default.and_then(|d| {
            let d = match d {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            values.iter().position(|v| *v == d)
        })),
        _ => Input::Text(TextInput::line(&match default {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
        })),
    }
}

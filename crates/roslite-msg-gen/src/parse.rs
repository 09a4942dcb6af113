//! The ROS 2 interface definition language: `.msg`, `.srv` and `.action` files.
//!
//! The grammar is `ros2/design: articles/116_legacy_interface_definition.md` as implemented by
//! `rosidl_adapter/parser.py`, which is what decides in practice whether a package builds. A
//! file is a list of lines; each is blank, a comment, a field `TYPE name [default]` or a
//! constant `TYPE NAME=value`. `.srv` files have two sections and `.action` files three,
//! separated by `---` lines.
//!
//! Deliberate differences from `rosidl_adapter` (each makes us stricter or fixes a rosidl bug,
//! never accepts a file rosidl would turn into a different type):
//! - a `#` inside a quoted string value belongs to the string (rosidl cuts the line at the
//!   first `#` wherever it is);
//! - a line is a constant only when its name is followed by `=` (rosidl looks for `=` anywhere,
//!   so a string default containing `=` turns the field into a broken constant);
//! - a quoted string value must end at its closing quote (rosidl silently keeps the quotes of
//!   `"abc" def` as part of an unquoted value);
//! - the ROS 1 types `time`/`duration` and `pkg/msg/Type` references are rejected with a hint
//!   (rosidl lists them as primitives or splits them and then fails much later).
//!
//! `.srv` and `.action` files also define the types rosidl synthesizes around them
//! (`rosidl_parser/definition.py`, classes `Service` and `Action`); see [`build_service`] and
//! [`build_action`]. Synthesized fields carry line 0.

mod idl;
mod value;

#[cfg(test)]
mod tests;

pub use idl::parse_idl;

use std::fmt;

use crate::ast::{
    ActionSpec, BaseType, Collection, Constant, Field, FieldType, Interface, InterfaceKind,
    MessageSpec, Primitive, ServiceSpec, TypeName,
};

/// A `.msg`/`.srv`/`.action`/`.idl` file that does not follow the grammar.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// The file name as the caller gave it.
    pub file: String,
    /// 1-based line of the offending text; 0 when the problem is the file's package or
    /// interface name rather than its contents.
    pub line: usize,
    /// 1-based column (in characters) where the offending text starts; 0 when the error is
    /// about the whole line, as every error of the line-based `.msg` grammar is.
    pub column: usize,
    /// What is wrong, phrased as what was expected and what was found.
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:", self.file, self.line)?;
        if self.column > 0 {
            write!(f, "{}:", self.column)?;
        }
        write!(f, " {}", self.message)
    }
}

impl std::error::Error for ParseError {}

/// Parses one interface file of package `package`.
///
/// `name` is the interface name (the file stem, e.g. `SetBool`) and `file` is only used in
/// error messages.
///
/// # Errors
///
/// [`ParseError`] for the first line that breaks the grammar, a naming rule, a range or a
/// bound, or for a wrong number of `---` separators.
pub fn parse_interface(
    package: &str,
    kind: InterfaceKind,
    name: &str,
    text: &str,
    file: &str,
) -> Result<Interface, ParseError> {
    let ctx = Ctx { package, file };
    if !is_lower_snake(package) {
        return Err(ctx.error(
            0,
            format!("invalid package name '{package}': expected {LOWER_SNAKE_RULE}"),
        ));
    }
    if !is_upper_camel(name) {
        return Err(ctx.error(
            0,
            format!("invalid interface name '{name}': expected {UPPER_CAMEL_RULE}"),
        ));
    }
    let sections = split_sections(&ctx, kind, text)?;
    let part = |suffix: &str| TypeName::new(package, kind, &format!("{name}{suffix}"));
    Ok(match kind {
        InterfaceKind::Msg => {
            Interface::Message(ctx.message(TypeName::new(package, kind, name), &sections[0])?)
        }
        InterfaceKind::Srv => {
            let request = ctx.message(part("_Request"), &sections[0])?;
            let response = ctx.message(part("_Response"), &sections[1])?;
            Interface::Service(build_service(
                TypeName::new(package, kind, name),
                request,
                response,
            ))
        }
        InterfaceKind::Action => {
            let goal = ctx.message(part("_Goal"), &sections[0])?;
            let result = ctx.message(part("_Result"), &sections[1])?;
            let feedback = ctx.message(part("_Feedback"), &sections[2])?;
            Interface::Action(build_action(
                TypeName::new(package, kind, name),
                goal,
                result,
                feedback,
            ))
        }
    })
}

/// Wraps a request and response into a service, adding the `_Event` message that Iron+
/// service introspection publishes (`rosidl_parser/definition.py`, `Service.__init__`):
/// `service_msgs/ServiceEventInfo info`, `<Name>_Request[<=1] request`,
/// `<Name>_Response[<=1] response`.
pub fn build_service(name: TypeName, request: MessageSpec, response: MessageSpec) -> ServiceSpec {
    let event = MessageSpec {
        name: TypeName::new(&name.package, name.kind, &format!("{}_Event", name.name)),
        fields: vec![
            synthesized(
                "info",
                named("service_msgs", "ServiceEventInfo"),
                Collection::Single,
            ),
            synthesized(
                "request",
                BaseType::Named(request.name.clone()),
                Collection::BoundedSequence(1),
            ),
            synthesized(
                "response",
                BaseType::Named(response.name.clone()),
                Collection::BoundedSequence(1),
            ),
        ],
        constants: Vec::new(),
    };
    ServiceSpec {
        name,
        request,
        response,
        event,
    }
}

/// Adds to goal, result and feedback the services and message an action runs on
/// (`rosidl_parser/definition.py`, `Action.__init__`, Humble and later: the goal id is a
/// `unique_identifier_msgs/UUID`, not a bare `uint8[16]`).
pub fn build_action(
    name: TypeName,
    goal: MessageSpec,
    result: MessageSpec,
    feedback: MessageSpec,
) -> ActionSpec {
    let part =
        |suffix: &str| TypeName::new(&name.package, name.kind, &format!("{}{suffix}", name.name));
    let uuid = || {
        synthesized(
            "goal_id",
            named("unique_identifier_msgs", "UUID"),
            Collection::Single,
        )
    };
    let nested = |field: &str, of: &MessageSpec| {
        synthesized(field, BaseType::Named(of.name.clone()), Collection::Single)
    };
    let message = |name: TypeName, fields: Vec<Field>| MessageSpec {
        name,
        fields,
        constants: Vec::new(),
    };

    let send_goal = build_service(
        part("_SendGoal"),
        message(
            part("_SendGoal_Request"),
            vec![uuid(), nested("goal", &goal)],
        ),
        message(
            part("_SendGoal_Response"),
            vec![
                synthesized(
                    "accepted",
                    BaseType::Primitive(Primitive::Bool),
                    Collection::Single,
                ),
                synthesized(
                    "stamp",
                    named("builtin_interfaces", "Time"),
                    Collection::Single,
                ),
            ],
        ),
    );
    let get_result = build_service(
        part("_GetResult"),
        message(part("_GetResult_Request"), vec![uuid()]),
        message(
            part("_GetResult_Response"),
            vec![
                synthesized(
                    "status",
                    BaseType::Primitive(Primitive::Int8),
                    Collection::Single,
                ),
                nested("result", &result),
            ],
        ),
    );
    let feedback_message = message(
        part("_FeedbackMessage"),
        vec![uuid(), nested("feedback", &feedback)],
    );
    ActionSpec {
        name,
        goal,
        result,
        feedback,
        send_goal,
        get_result,
        feedback_message,
    }
}

fn synthesized(name: &str, base: BaseType, collection: Collection) -> Field {
    Field {
        name: name.to_owned(),
        ty: FieldType { base, collection },
        default: None,
        line: 0,
        key: false,
    }
}

fn named(package: &str, name: &str) -> BaseType {
    BaseType::Named(TypeName::new(package, InterfaceKind::Msg, name))
}

const LOWER_SNAKE_RULE: &str =
    "lower_snake_case: a letter a-z, then a-z, 0-9 or '_', without '__' or a trailing '_'";
const UPPER_SNAKE_RULE: &str =
    "UPPER_SNAKE_CASE: a letter A-Z, then A-Z, 0-9 or '_', without '__' or a trailing '_'";
const UPPER_CAMEL_RULE: &str = "UpperCamelCase: a letter A-Z, then only letters and digits";

/// Package and field names (`rosidl_adapter`: `VALID_PACKAGE_NAME_PATTERN`,
/// `VALID_FIELD_NAME_PATTERN`).
fn is_lower_snake(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_lowercase())
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !s.contains("__")
        && !s.ends_with('_')
}

/// Constant names (`VALID_CONSTANT_NAME_PATTERN` `^[A-Z]([A-Z0-9_]?[A-Z0-9]+)*$`).
fn is_upper_snake(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_uppercase())
        && s.chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        && !s.contains("__")
        && !s.ends_with('_')
}

/// Interface names (`VALID_MESSAGE_NAME_PATTERN` `^[A-Z][A-Za-z0-9]*$`).
fn is_upper_camel(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_uppercase()) && s.chars().all(|c| c.is_ascii_alphanumeric())
}

/// One numbered source line.
type Line<'a> = (usize, &'a str);

/// Splits the file at its `---` lines, checking there are as many as `kind` needs.
fn split_sections<'a>(
    ctx: &Ctx<'_>,
    kind: InterfaceKind,
    text: &'a str,
) -> Result<Vec<Vec<Line<'a>>>, ParseError> {
    let wanted = match kind {
        InterfaceKind::Msg => 0,
        InterfaceKind::Srv => 1,
        InterfaceKind::Action => 2,
    };
    let mut sections = vec![Vec::new()];
    let mut last_line = 1;
    // Editors on Windows may save a UTF-8 byte order mark; it is not part of the first type.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        last_line = number;
        let code = line.split('#').next().unwrap_or("").trim();
        if code != "---" {
            sections
                .last_mut()
                .expect("internal bug: sections is never empty")
                .push((number, line));
            continue;
        }
        if sections.len() > wanted {
            let message = match kind {
                InterfaceKind::Msg => {
                    "unexpected '---' in a .msg file: expected a field, a constant or a comment \
                     ('---' only separates the parts of .srv and .action files)"
                        .to_owned()
                }
                InterfaceKind::Srv => "expected exactly one '---' in a .srv file (between \
                                       request and response), found a second one"
                    .to_owned(),
                InterfaceKind::Action => "expected exactly two '---' in a .action file \
                                          (goal --- result --- feedback), found a third one"
                    .to_owned(),
            };
            return Err(ctx.error(number, message));
        }
        sections.push(Vec::new());
    }
    if sections.len() <= wanted {
        let message = match kind {
            InterfaceKind::Srv => {
                "expected a '---' line separating the request from the response, found end of \
                 file"
                    .to_owned()
            }
            _ => format!(
                "expected two '---' lines separating goal, result and feedback, found {} before \
                 end of file",
                sections.len() - 1
            ),
        };
        return Err(ctx.error(last_line, message));
    }
    Ok(sections)
}

/// What the parser knows about the file it is reading.
struct Ctx<'a> {
    package: &'a str,
    file: &'a str,
}

/// One non-blank, non-comment line, split into its parts but not yet checked.
enum Item<'a> {
    Field {
        ty: &'a str,
        name: &'a str,
        default: Option<&'a str>,
    },
    Constant {
        ty: &'a str,
        name: &'a str,
        value: &'a str,
    },
}

impl Ctx<'_> {
    fn error(&self, line: usize, message: impl Into<String>) -> ParseError {
        ParseError {
            file: self.file.to_owned(),
            line,
            column: 0,
            message: message.into(),
        }
    }

    /// Parses one section (a whole `.msg`, or one part of a `.srv`/`.action`).
    fn message(&self, name: TypeName, lines: &[Line<'_>]) -> Result<MessageSpec, ParseError> {
        let mut spec = MessageSpec {
            name,
            fields: Vec::new(),
            constants: Vec::new(),
        };
        for &(number, line) in lines {
            match self.split_line(number, line)? {
                None => {}
                Some(Item::Field { ty, name, default }) => {
                    let field = self.field(number, ty, name, default)?;
                    if let Some(earlier) = spec.fields.iter().find(|f| f.name == field.name) {
                        return Err(self.error(
                            number,
                            format!(
                                "duplicate field name '{}': expected a name not already used on \
                                 line {}",
                                field.name, earlier.line
                            ),
                        ));
                    }
                    spec.fields.push(field);
                }
                Some(Item::Constant { ty, name, value }) => {
                    let constant = self.constant(number, ty, name, value)?;
                    if let Some(earlier) = spec.constants.iter().find(|c| c.name == constant.name) {
                        return Err(self.error(
                            number,
                            format!(
                                "duplicate constant name '{}': expected a name not already used \
                                 on line {}",
                                constant.name, earlier.line
                            ),
                        ));
                    }
                    spec.constants.push(constant);
                }
            }
        }
        Ok(spec)
    }

    /// Splits `TYPE name [default]` / `TYPE NAME=value`, dropping comments outside values.
    fn split_line<'l>(&self, number: usize, line: &'l str) -> Result<Option<Item<'l>>, ParseError> {
        let body = line.trim_start();
        if body.is_empty() || body.starts_with('#') {
            return Ok(None);
        }
        let ty_end = body
            .find(|c: char| c.is_whitespace() || c == '#')
            .unwrap_or(body.len());
        let ty = &body[..ty_end];
        let rest = body[ty_end..].trim_start();
        if rest.is_empty() || rest.starts_with('#') {
            return Err(self.error(
                number,
                format!(
                    "expected a field name after type '{ty}', found {}",
                    describe(rest)
                ),
            ));
        }
        let name_end = rest
            .find(|c: char| c.is_whitespace() || c == '=' || c == '#')
            .unwrap_or(rest.len());
        let name = &rest[..name_end];
        if name.is_empty() {
            return Err(self.error(
                number,
                format!("expected a constant name between type '{ty}' and '=', found '='"),
            ));
        }
        let after = rest[name_end..].trim_start();
        Ok(Some(if let Some(value) = after.strip_prefix('=') {
            Item::Constant { ty, name, value }
        } else if after.is_empty() || after.starts_with('#') {
            Item::Field {
                ty,
                name,
                default: None,
            }
        } else {
            Item::Field {
                ty,
                name,
                default: Some(after),
            }
        }))
    }

    fn field(
        &self,
        number: usize,
        ty_text: &str,
        name: &str,
        default: Option<&str>,
    ) -> Result<Field, ParseError> {
        let ty = self.field_type(number, ty_text)?;
        if !is_lower_snake(name) {
            return Err(self.error(
                number,
                format!("invalid field name '{name}': expected {LOWER_SNAKE_RULE}"),
            ));
        }
        let default = match default {
            None => None,
            Some(_) if matches!(ty.base, BaseType::Named(_)) => {
                return Err(self.error(
                    number,
                    format!(
                        "field '{name}' has message type '{ty_text}', which cannot have a default \
                         value: expected end of line or a comment after the field name"
                    ),
                ));
            }
            Some(text) => Some(value::parse_default(&ty, ty_text, text).map_err(|message| {
                self.error(
                    number,
                    format!("default value of field '{name}': {message}"),
                )
            })?),
        };
        Ok(Field {
            name: name.to_owned(),
            ty,
            default,
            line: number,
            key: false,
        })
    }

    fn constant(
        &self,
        number: usize,
        ty_text: &str,
        name: &str,
        text: &str,
    ) -> Result<Constant, ParseError> {
        let ty = self.field_type(number, ty_text)?;
        let scalar = match (&ty.base, ty.collection) {
            (BaseType::Primitive(_), Collection::Single)
            | (BaseType::String { bound: None }, Collection::Single)
            | (BaseType::WString { bound: None }, Collection::Single) => ty.base,
            _ => {
                return Err(self.error(
                    number,
                    format!(
                        "constant '{name}' has type '{ty_text}': expected a primitive type, \
                         'string' or 'wstring' (constants cannot be arrays, bounded strings or \
                         messages)"
                    ),
                ));
            }
        };
        if !is_upper_snake(name) {
            return Err(self.error(
                number,
                format!("invalid constant name '{name}': expected {UPPER_SNAKE_RULE}"),
            ));
        }
        let value = value::parse_constant(&scalar, ty_text, text).map_err(|message| {
            self.error(number, format!("value of constant '{name}': {message}"))
        })?;
        Ok(Constant {
            name: name.to_owned(),
            ty: scalar,
            value,
            line: number,
        })
    }

    /// Parses `base`, `base[N]`, `base[<=N]` or `base[]`.
    fn field_type(&self, number: usize, text: &str) -> Result<FieldType, ParseError> {
        let (base_text, collection) = match text.find('[') {
            None => (text, Collection::Single),
            Some(open) => {
                let suffix = &text[open..];
                let inner = suffix
                    .strip_suffix(']')
                    .map(|s| &s[1..])
                    .filter(|inner| !inner.contains(['[', ']']))
                    .ok_or_else(|| {
                        self.error(
                            number,
                            format!(
                                "expected one array suffix '[N]', '[<=N]' or '[]' at the end of \
                                 type '{text}', found '{suffix}'"
                            ),
                        )
                    })?;
                (&text[..open], self.collection(number, text, inner)?)
            }
        };
        let base = self.base_type(number, text, base_text)?;
        Ok(FieldType { base, collection })
    }

    fn collection(&self, number: usize, text: &str, inner: &str) -> Result<Collection, ParseError> {
        if inner.is_empty() {
            return Ok(Collection::UnboundedSequence);
        }
        let (digits, bounded) = match inner.strip_prefix("<=") {
            Some(digits) => (digits, true),
            None => (inner, false),
        };
        let size = positive(digits).map_err(|found| {
            self.error(
                number,
                format!(
                    "expected an array size in type '{text}': a positive integer N in '[N]' or \
                     '[<=N]', at most {MAX_CDR_LENGTH}, found '{found}'"
                ),
            )
        })?;
        // CDR writes the length of a sequence as a 32-bit count, and the counts behind a
        // fixed array add up the same way.
        if size > MAX_CDR_LENGTH {
            return Err(self.error(
                number,
                format!(
                    "array size {size} in type '{text}' is more than CDR can carry: lengths are \
                     32-bit, so at most {MAX_CDR_LENGTH}; use a smaller size"
                ),
            ));
        }
        Ok(if bounded {
            Collection::BoundedSequence(size)
        } else {
            Collection::Array(size)
        })
    }

    fn base_type(&self, number: usize, text: &str, base: &str) -> Result<BaseType, ParseError> {
        if let Some(p) = Primitive::from_keyword(base) {
            return Ok(BaseType::Primitive(p));
        }
        match base {
            "string" => return Ok(BaseType::String { bound: None }),
            "wstring" => return Ok(BaseType::WString { bound: None }),
            "time" | "duration" => {
                let suggestion = if base == "time" { "Time" } else { "Duration" };
                return Err(self.error(
                    number,
                    format!(
                        "'{base}' is a ROS 1 built-in type: expected \
                         'builtin_interfaces/{suggestion}' in ROS 2"
                    ),
                ));
            }
            _ => {}
        }
        for (keyword, wide) in [("string<=", false), ("wstring<=", true)] {
            if let Some(digits) = base.strip_prefix(keyword) {
                let bound = positive(digits).map_err(|found| {
                    self.error(
                        number,
                        format!(
                            "expected a positive integer string bound after '<=' in type \
                             '{text}', at most {MAX_CDR_LENGTH}, found '{found}'"
                        ),
                    )
                })?;
                // The 32-bit length of a CDR string counts its terminating NUL too.
                if bound >= MAX_CDR_LENGTH {
                    return Err(self.error(
                        number,
                        format!(
                            "string bound {bound} in type '{text}' is more than CDR can carry: \
                             lengths are 32-bit and count the final NUL, so at most {}; use a \
                             smaller bound",
                            MAX_CDR_LENGTH - 1
                        ),
                    ));
                }
                return Ok(if wide {
                    BaseType::WString { bound: Some(bound) }
                } else {
                    BaseType::String { bound: Some(bound) }
                });
            }
        }
        self.named_type(number, base).map(BaseType::Named)
    }

    /// `pkg/Type`, same-package `Type`, or `Header` (ROS 1 shorthand kept by ROS 2 for
    /// `std_msgs/Header`).
    fn named_type(&self, number: usize, base: &str) -> Result<TypeName, ParseError> {
        let parts: Vec<&str> = base.split('/').collect();
        let (package, name) = match parts.as_slice() {
            ["Header"] => ("std_msgs", "Header"),
            [name] => (self.package, *name),
            [package, name] => (*package, *name),
            [package, "msg", name] => {
                return Err(self.error(
                    number,
                    format!(
                        "expected a message type written 'package/Type', found '{base}' \
                         (write '{package}/{name}')"
                    ),
                ));
            }
            _ => {
                return Err(self.error(
                    number,
                    format!("expected a message type written 'package/Type', found '{base}'"),
                ));
            }
        };
        if parts.len() == 2 && !is_lower_snake(package) {
            return Err(self.error(
                number,
                format!(
                    "invalid package name '{package}' in type '{base}': expected {LOWER_SNAKE_RULE}"
                ),
            ));
        }
        if !is_upper_camel(name) {
            let what = if parts.len() == 1 {
                "unknown type"
            } else {
                "invalid message name in type"
            };
            return Err(self.error(
                number,
                format!(
                    "{what} '{base}': expected a primitive type (bool, byte, char, float32, \
                     float64, int8, uint8, int16, uint16, int32, uint32, int64, uint64), string, \
                     wstring, or a message type 'Type' or 'package/Type' in {UPPER_CAMEL_RULE}"
                ),
            ));
        }
        Ok(TypeName::new(package, InterfaceKind::Msg, name))
    }
}

/// The largest length CDR can write: lengths are 32-bit counts (OMG XTypes 1.3 §7.4.3.5.3).
const MAX_CDR_LENGTH: usize = u32::MAX as usize;

/// A decimal size or bound above zero; `Err` holds the offending text.
fn positive(digits: &str) -> Result<usize, &str> {
    match digits.parse::<usize>() {
        Ok(n) if n > 0 && digits.bytes().all(|b| b.is_ascii_digit()) => Ok(n),
        _ => Err(digits),
    }
}

/// How an error message names the text it stopped at.
fn describe(rest: &str) -> String {
    let rest = rest.trim_start();
    if rest.is_empty() {
        "end of line".to_owned()
    } else if rest.starts_with('#') {
        "a comment".to_owned()
    } else {
        let token: String = rest.chars().take(24).collect();
        format!("'{token}'")
    }
}

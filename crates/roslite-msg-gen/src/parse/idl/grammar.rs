//! Tokens into the syntax of an IDL file: modules, structs, typedefs, constants, enums and
//! includes, with annotations, as `rosidl_parser/grammar.lark` has them (OMG IDL 4.2 §7.4.1
//! core data types, §7.4.13 extended integer types, §7.4.15.4.2 applying annotations).
//!
//! Types are checked here as far as the grammar alone can: rosidl's generators know no
//! `char`, `wchar`, `long double`, `fixed`, `any`, `map` or unions, and no multi-dimensional
//! arrays, and each is refused where it is written. Expressions stop at one signed literal,
//! a name or a parenthesized expression, which is all `rosidl_parser` evaluates.

use crate::ast::Primitive;

use super::lexer::Tok;
use super::Pos;

/// A name as written, where it was written.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Ident {
    pub(super) text: String,
    pub(super) pos: Pos,
}

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Definition {
    Module {
        name: Ident,
        body: Vec<Definition>,
    },
    Const(ConstDcl),
    Struct(StructDef),
    /// `struct Name;` (IDL 4.2 §7.4.1.4.4.4.1): no members, and nothing for rosidl to do.
    ForwardStruct(Ident),
    /// `enum Name { A, B }`: rosidl parses enums and ignores them; a member of an enum type
    /// is an unknown type to it.
    Enum(Ident),
    Typedef(TypedefDcl),
    /// `#include "pkg/msg/Name.idl"`: rosidl records includes and nothing more; types are
    /// found by their scoped names.
    Include,
}

#[derive(Clone, Debug, PartialEq)]
pub(super) struct Annotation {
    /// As written, `::`-joined for a scoped name.
    pub(super) name: String,
    pub(super) pos: Pos,
    pub(super) params: AnnotationParams,
}

#[derive(Clone, Debug, PartialEq)]
pub(super) enum AnnotationParams {
    /// `@key`.
    None,
    /// `@key(TRUE)`.
    Single(Expr),
    /// `@default(value=5)`, `@verbatim(language="comment", text="...")`.
    Named(Vec<(Ident, Expr)>),
}

/// A constant expression as rosidl evaluates it: a literal with an optional sign, or a name.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Expr {
    pub(super) value: Value,
    pub(super) pos: Pos,
}

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Value {
    Bool(bool),
    Int(i128),
    Float(f64),
    String(String),
    WString(String),
    /// A scoped name; rosidl keeps the name itself as the value.
    Name(String),
}

impl Value {
    pub(super) fn describe(&self) -> String {
        match self {
            Self::Bool(b) => if *b { "TRUE" } else { "FALSE" }.to_owned(),
            Self::Int(v) => v.to_string(),
            Self::Float(v) => format!("{v:?}"),
            Self::String(s) => format!("\"{}\"", s.escape_debug()),
            Self::WString(s) => format!("L\"{}\"", s.escape_debug()),
            Self::Name(n) => format!("the name '{n}'"),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub(super) struct ConstDcl {
    pub(super) annotations: Vec<Annotation>,
    pub(super) ty: TypeSpec,
    pub(super) name: Ident,
    pub(super) value: Expr,
}

#[derive(Clone, Debug, PartialEq)]
pub(super) struct StructDef {
    pub(super) annotations: Vec<Annotation>,
    pub(super) name: Ident,
    pub(super) members: Vec<Member>,
}

#[derive(Clone, Debug, PartialEq)]
pub(super) struct Member {
    pub(super) annotations: Vec<Annotation>,
    pub(super) ty: TypeSpec,
    pub(super) declarators: Vec<Declarator>,
}

/// `name` or `name[N]`.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Declarator {
    pub(super) name: Ident,
    pub(super) array: Option<u32>,
}

#[derive(Clone, Debug, PartialEq)]
pub(super) struct TypedefDcl {
    pub(super) ty: TypeSpec,
    pub(super) declarator: Declarator,
}

/// A type as written.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum TypeSpec {
    Primitive(Primitive, Pos),
    String {
        wide: bool,
        bound: Option<u32>,
        pos: Pos,
    },
    Sequence {
        element: Box<TypeSpec>,
        bound: Option<u32>,
        pos: Pos,
    },
    /// `Name`, `pkg::msg::Name` or `::pkg::msg::Name`, parts without the leading `::`.
    Scoped {
        parts: Vec<String>,
        pos: Pos,
    },
}

impl TypeSpec {
    pub(super) fn pos(&self) -> Pos {
        match self {
            Self::Primitive(_, pos)
            | Self::String { pos, .. }
            | Self::Sequence { pos, .. }
            | Self::Scoped { pos, .. } => *pos,
        }
    }
}

/// What a grammar error says: where and what.
pub(super) type SyntaxError = (Pos, String);

/// Parses a whole file.
///
/// # Errors
/// The first token that does not fit the grammar, or a construct rosidl does not read.
pub(super) fn specification(tokens: &[(Pos, Tok)]) -> Result<Vec<Definition>, SyntaxError> {
    let mut parser = Parser {
        tokens,
        at: 0,
        depth: 0,
    };
    let mut out = Vec::new();
    while parser.peek() != &Tok::Eof {
        out.push(parser.definition()?);
    }
    if out.is_empty() {
        return Err((
            parser.pos(),
            "expected a module, found end of file (an .idl file defines its types inside \
             'module <package> { module <msg|srv|action> { ... }; };')"
                .to_owned(),
        ));
    }
    Ok(out)
}

/// How deep modules, types and expressions may nest: far more than any real file, few enough
/// that the recursive descent cannot run out of stack on a hostile one.
const MAX_NESTING: usize = 64;

struct Parser<'a> {
    tokens: &'a [(Pos, Tok)],
    at: usize,
    /// Nesting of the rules being parsed, against [`MAX_NESTING`].
    depth: usize,
}

impl Parser<'_> {
    fn peek(&self) -> &Tok {
        self.peek_at(0)
    }

    fn peek_at(&self, ahead: usize) -> &Tok {
        self.tokens
            .get(self.at + ahead)
            .or_else(|| self.tokens.last())
            .map_or(&Tok::Eof, |(_, t)| t)
    }

    fn pos(&self) -> Pos {
        self.tokens
            .get(self.at)
            .or_else(|| self.tokens.last())
            .map_or(Pos { line: 1, column: 1 }, |(p, _)| *p)
    }

    fn bump(&mut self) -> Tok {
        let tok = self.peek().clone();
        if self.at < self.tokens.len() {
            self.at += 1;
        }
        tok
    }

    fn is_punct(&self, p: &str) -> bool {
        matches!(self.peek(), Tok::Punct(q) if *q == p)
    }

    fn is_word(&self, word: &str) -> bool {
        matches!(self.peek(), Tok::Ident(w) if w == word)
    }

    fn eat_punct(&mut self, p: &str) -> bool {
        let found = self.is_punct(p);
        if found {
            self.bump();
        }
        found
    }

    fn eat_word(&mut self, word: &str) -> bool {
        let found = self.is_word(word);
        if found {
            self.bump();
        }
        found
    }

    fn unexpected(&self, expected: &str) -> SyntaxError {
        (
            self.pos(),
            format!("expected {expected}, found {}", self.peek().describe()),
        )
    }

    fn expect_punct(&mut self, p: &str, expected: &str) -> Result<(), SyntaxError> {
        if self.eat_punct(p) {
            Ok(())
        } else {
            Err(self.unexpected(expected))
        }
    }

    /// A name. As in rosidl's grammar (whose lexer is contextual), a keyword is a name where
    /// only a name can stand: `.msg` fields called `sequence` or `string` become IDL members
    /// of these names.
    fn name(&mut self, what: &str) -> Result<Ident, SyntaxError> {
        let pos = self.pos();
        match self.peek().clone() {
            Tok::Ident(text) => {
                self.bump();
                Ok(Ident { text, pos })
            }
            _ => Err(self.unexpected(what)),
        }
    }

    /// Runs `rule` one nesting level deeper, refusing to go past [`MAX_NESTING`].
    fn nested<T>(
        &mut self,
        rule: impl FnOnce(&mut Self) -> Result<T, SyntaxError>,
    ) -> Result<T, SyntaxError> {
        if self.depth >= MAX_NESTING {
            return Err((
                self.pos(),
                format!("nested more than {MAX_NESTING} levels deep: expected a flatter file"),
            ));
        }
        self.depth += 1;
        let out = rule(self);
        self.depth -= 1;
        out
    }

    /// (2) definition: module, const, type or include, with the `;` after it.
    fn definition(&mut self) -> Result<Definition, SyntaxError> {
        self.nested(Self::definition_here)
    }

    fn definition_here(&mut self) -> Result<Definition, SyntaxError> {
        if let Tok::Include(_) = self.peek() {
            self.bump();
            return Ok(Definition::Include);
        }
        let annotations = self.annotations()?;
        let start = self.pos();
        let definition = if self.eat_word("module") {
            let name = self.name("a module name")?;
            self.expect_punct("{", "'{' after the module name")?;
            let mut body = Vec::new();
            while !self.is_punct("}") {
                if self.peek() == &Tok::Eof {
                    return Err(self.unexpected(&format!("'}}' to close module '{}'", name.text)));
                }
                body.push(self.definition()?);
            }
            self.bump();
            if body.is_empty() {
                return Err((
                    start,
                    format!(
                        "module '{}' is empty: IDL requires at least one definition in a module",
                        name.text
                    ),
                ));
            }
            Definition::Module { name, body }
        } else if self.eat_word("const") {
            self.const_dcl(annotations)?
        } else if self.eat_word("struct") {
            let name = self.name("a struct name")?;
            if self.is_punct(";") {
                Definition::ForwardStruct(name)
            } else {
                self.struct_body(annotations, name)?
            }
        } else if self.eat_word("typedef") {
            self.typedef_dcl()?
        } else if self.eat_word("enum") {
            self.enum_dcl()?
        } else if self.is_word("union") {
            return Err((
                start,
                "unions are not supported: rosidl's grammar has no 'union' (use a struct)"
                    .to_owned(),
            ));
        } else if annotations.is_empty() {
            return Err(
                self.unexpected("'module', 'struct', 'typedef', 'const', 'enum' or '#include'")
            );
        } else {
            return Err(self.unexpected(
                "'module', 'struct', 'typedef', 'const' or 'enum' after the annotations",
            ));
        };
        self.expect_punct(";", "';' after the closing '}' or declaration")?;
        Ok(definition)
    }

    /// (225) annotation_appl: `@name`, `@name(expr)`, `@name(a=expr, b=expr)`.
    fn annotations(&mut self) -> Result<Vec<Annotation>, SyntaxError> {
        let mut out = Vec::new();
        while self.is_punct("@") {
            let pos = self.pos();
            self.bump();
            let name = self.annotation_name()?;
            let params = if self.eat_punct("(") {
                let named = matches!(self.peek(), Tok::Ident(_))
                    && matches!(self.peek_at(1), Tok::Punct("="));
                let params = if named {
                    let mut params = Vec::new();
                    loop {
                        let key = self.name("a parameter name")?;
                        self.expect_punct("=", "'=' after the parameter name")?;
                        params.push((key, self.expr()?));
                        if !self.eat_punct(",") {
                            break;
                        }
                    }
                    AnnotationParams::Named(params)
                } else {
                    AnnotationParams::Single(self.expr()?)
                };
                self.expect_punct(")", "')' to close the annotation's parameters")?;
                params
            } else {
                AnnotationParams::None
            };
            out.push(Annotation { name, pos, params });
        }
        Ok(out)
    }

    /// An annotation's name may be a keyword (`@default`).
    fn annotation_name(&mut self) -> Result<String, SyntaxError> {
        let mut name = String::new();
        loop {
            match self.peek().clone() {
                Tok::Ident(part) => {
                    self.bump();
                    name.push_str(&part);
                }
                _ => return Err(self.unexpected("an annotation name after '@'")),
            }
            if !self.eat_punct("::") {
                return Ok(name);
            }
            name.push_str("::");
        }
    }

    fn scoped_name(&mut self, what: &str) -> Result<Vec<String>, SyntaxError> {
        self.eat_punct("::");
        let mut parts = vec![self.name(what)?.text];
        while self.is_punct("::") {
            self.bump();
            parts.push(self.name("a name after '::'")?.text);
        }
        Ok(parts)
    }

    /// (5) const_dcl, after `const`.
    fn const_dcl(&mut self, annotations: Vec<Annotation>) -> Result<Definition, SyntaxError> {
        let ty = self.type_spec()?;
        let name = self.name("a constant name")?;
        self.expect_punct("=", "'=' after the constant name")?;
        let value = self.expr()?;
        Ok(Definition::Const(ConstDcl {
            annotations,
            ty,
            name,
            value,
        }))
    }

    /// (46) struct_def after the name: `{ member+ }`.
    fn struct_body(
        &mut self,
        annotations: Vec<Annotation>,
        name: Ident,
    ) -> Result<Definition, SyntaxError> {
        if self.is_punct(":") {
            return Err((
                self.pos(),
                format!(
                    "struct '{}' inherits from another struct, which rosidl does not support",
                    name.text
                ),
            ));
        }
        self.expect_punct("{", "'{' after the struct name")?;
        let mut members = Vec::new();
        while !self.is_punct("}") {
            if self.peek() == &Tok::Eof {
                return Err(self.unexpected(&format!("'}}' to close struct '{}'", name.text)));
            }
            members.push(self.member()?);
        }
        if members.is_empty() {
            return Err((
                name.pos,
                format!(
                    "struct '{}' has no members: IDL and rosidl need at least one (rosidl writes \
                     'uint8 structure_needs_at_least_one_member;' for an empty message)",
                    name.text
                ),
            ));
        }
        self.bump();
        Ok(Definition::Struct(StructDef {
            annotations,
            name,
            members,
        }))
    }

    /// (47) member: `annotations type declarator (, declarator)* ;`.
    fn member(&mut self) -> Result<Member, SyntaxError> {
        let annotations = self.annotations()?;
        let ty = self.type_spec()?;
        let mut declarators = vec![self.declarator()?];
        while self.eat_punct(",") {
            declarators.push(self.declarator()?);
        }
        self.expect_punct(";", "';' or ',' after the member name")?;
        Ok(Member {
            annotations,
            ty,
            declarators,
        })
    }

    /// (68) declarator: `name` or `name[N]`.
    fn declarator(&mut self) -> Result<Declarator, SyntaxError> {
        let name = self.name("a member name")?;
        let array = if self.eat_punct("[") {
            let size = self.positive_int("an array size")?;
            self.expect_punct("]", "']' after the array size")?;
            if self.is_punct("[") {
                return Err((
                    self.pos(),
                    format!(
                        "'{}' is a multi-dimensional array, which rosidl does not support: use \
                         one dimension, or an array of a struct holding an array",
                        name.text
                    ),
                ));
            }
            Some(size)
        } else {
            None
        };
        Ok(Declarator { name, array })
    }

    /// (63) typedef_dcl, after `typedef`: one type and one declarator.
    fn typedef_dcl(&mut self) -> Result<Definition, SyntaxError> {
        if self.is_word("struct") || self.is_word("enum") || self.is_word("union") {
            return Err((
                self.pos(),
                "a typedef of a type declared in place is not supported: declare the type, \
                 then write 'typedef Name Alias;'"
                    .to_owned(),
            ));
        }
        let ty = self.type_spec()?;
        let declarator = self.declarator()?;
        if self.is_punct(",") {
            return Err((
                self.pos(),
                "a typedef with several names is not supported by rosidl: write one typedef \
                 per name"
                    .to_owned(),
            ));
        }
        Ok(Definition::Typedef(TypedefDcl { ty, declarator }))
    }

    /// (57) enum_dcl, after `enum`.
    fn enum_dcl(&mut self) -> Result<Definition, SyntaxError> {
        let name = self.name("an enum name")?;
        self.expect_punct("{", "'{' after the enum name")?;
        loop {
            self.annotations()?;
            self.name("an enumerator name")?;
            if !self.eat_punct(",") {
                break;
            }
        }
        self.expect_punct("}", "',' or '}' after the enumerator")?;
        Ok(Definition::Enum(name))
    }

    /// (21) type_spec.
    fn type_spec(&mut self) -> Result<TypeSpec, SyntaxError> {
        self.nested(Self::type_spec_here)
    }

    fn type_spec_here(&mut self) -> Result<TypeSpec, SyntaxError> {
        let pos = self.pos();
        let Tok::Ident(word) = self.peek().clone() else {
            if self.is_punct("::") {
                let parts = self.scoped_name("a type name")?;
                return Ok(TypeSpec::Scoped { parts, pos });
            }
            return Err(self.unexpected("a type"));
        };
        let primitive = |p| Ok(TypeSpec::Primitive(p, pos));
        let refuse = |what: &str, why: &str| Err((pos, format!("{what} is not supported: {why}")));
        match word.as_str() {
            "boolean" => {
                self.bump();
                primitive(Primitive::Bool)
            }
            "octet" => {
                self.bump();
                primitive(Primitive::Byte)
            }
            "int8" | "uint8" | "int16" | "uint16" | "int32" | "uint32" | "int64" | "uint64" => {
                self.bump();
                primitive(
                    Primitive::from_keyword(&word)
                        .expect("internal bug: every IDL integer keyword is a .msg keyword"),
                )
            }
            "short" => {
                self.bump();
                primitive(Primitive::Int16)
            }
            "float" => {
                self.bump();
                primitive(Primitive::Float32)
            }
            "double" => {
                self.bump();
                primitive(Primitive::Float64)
            }
            "long" => {
                self.bump();
                if self.eat_word("long") {
                    primitive(Primitive::Int64)
                } else if self.is_word("double") {
                    refuse(
                        "'long double'",
                        "ROS 2 type supports and CDR implementations differ on its size; use \
                         'double'",
                    )
                } else {
                    primitive(Primitive::Int32)
                }
            }
            "unsigned" => {
                self.bump();
                if self.eat_word("short") {
                    primitive(Primitive::Uint16)
                } else if self.eat_word("long") {
                    if self.eat_word("long") {
                        primitive(Primitive::Uint64)
                    } else {
                        primitive(Primitive::Uint32)
                    }
                } else {
                    Err(self.unexpected("'short' or 'long' after 'unsigned'"))
                }
            }
            "char" => refuse(
                "IDL 'char'",
                "roslite does not implement the IDL character types; a .msg 'char' is written \
                 'uint8' in IDL, which is what rosidl generates for it",
            ),
            "wchar" => refuse(
                "IDL 'wchar'",
                "roslite does not implement the IDL wide character type; use 'uint16' or \
                 'wstring'",
            ),
            "fixed" => refuse(
                "IDL 'fixed'",
                "rosidl's generators have no fixed-point type; use 'double'",
            ),
            "any" | "map" => refuse(
                &format!("IDL '{word}'"),
                "rosidl's grammar does not have it",
            ),
            "string" | "wstring" => {
                self.bump();
                let bound = if self.eat_punct("<") {
                    let bound = self.positive_int("a string bound")?;
                    self.expect_punct(">", "'>' after the string bound")?;
                    Some(bound)
                } else {
                    None
                };
                Ok(TypeSpec::String {
                    wide: word == "wstring",
                    bound,
                    pos,
                })
            }
            "sequence" => {
                self.bump();
                self.expect_punct("<", "'<' after 'sequence'")?;
                let element = self.type_spec()?;
                if matches!(element, TypeSpec::Sequence { .. }) {
                    return Err((
                        element.pos(),
                        "a sequence of sequences is not supported by rosidl: wrap the inner \
                         sequence in a struct"
                            .to_owned(),
                    ));
                }
                let bound = if self.eat_punct(",") {
                    Some(self.positive_int("a sequence bound")?)
                } else {
                    None
                };
                self.expect_punct(">", "',' or '>' after the sequence's element type")?;
                Ok(TypeSpec::Sequence {
                    element: Box::new(element),
                    bound,
                    pos,
                })
            }
            _ => {
                let parts = self.scoped_name("a type name")?;
                Ok(TypeSpec::Scoped { parts, pos })
            }
        }
    }

    /// (19) positive_int_const, as rosidl reads it: a literal integer above zero that fits
    /// CDR's 32-bit lengths.
    fn positive_int(&mut self, what: &str) -> Result<u32, SyntaxError> {
        let expr = self.expr()?;
        match expr.value {
            Value::Int(n) if n > 0 && n <= i128::from(u32::MAX) => {
                Ok(u32::try_from(n).expect("internal bug: checked range"))
            }
            Value::Int(n) if n > 0 => Err((
                expr.pos,
                format!(
                    "{what} of {n} is more than CDR can carry: lengths are 32-bit, so at most {}",
                    u32::MAX
                ),
            )),
            Value::Name(name) => Err((
                expr.pos,
                format!(
                    "expected {what} as a literal integer, found the name '{name}' (rosidl reads \
                     only literal sizes, not constants)"
                ),
            )),
            other => Err((
                expr.pos,
                format!(
                    "expected {what}: a positive integer, found {}",
                    other.describe()
                ),
            )),
        }
    }

    /// (7) const_expr, as far as rosidl evaluates it: an optional sign and a primary.
    fn expr(&mut self) -> Result<Expr, SyntaxError> {
        let pos = self.pos();
        let value = self.unary()?;
        // `<` and `>` close template types here (`string<8>`); IDL's shifts are `<<` and `>>`.
        if let Tok::Punct(op @ ("+" | "-" | "*" | "/" | "%" | "|" | "^" | "&")) = self.peek() {
            return Err((
                self.pos(),
                format!(
                    "expected a single value, found the operator '{op}': rosidl evaluates no \
                     expressions, so write the value as one literal"
                ),
            ));
        }
        Ok(Expr { value, pos })
    }

    fn unary(&mut self) -> Result<Value, SyntaxError> {
        self.nested(Self::unary_here)
    }

    fn unary_here(&mut self) -> Result<Value, SyntaxError> {
        let pos = self.pos();
        if self.eat_punct("-") {
            return match self.unary()? {
                Value::Int(v) => Ok(Value::Int(-v)),
                Value::Float(v) => Ok(Value::Float(-v)),
                other => Err((
                    pos,
                    format!("expected a number after '-', found {}", other.describe()),
                )),
            };
        }
        if self.eat_punct("+") {
            return match self.unary()? {
                v @ (Value::Int(_) | Value::Float(_)) => Ok(v),
                other => Err((
                    pos,
                    format!("expected a number after '+', found {}", other.describe()),
                )),
            };
        }
        if self.is_punct("~") {
            return Err((
                pos,
                "the operator '~' is not supported: rosidl evaluates no expressions, so write \
                 the value as one literal"
                    .to_owned(),
            ));
        }
        if self.eat_punct("(") {
            let inner = self.expr()?;
            self.expect_punct(")", "')'")?;
            return Ok(inner.value);
        }
        match self.peek().clone() {
            Tok::Int(v) => {
                self.bump();
                Ok(Value::Int(i128::try_from(v).map_err(|_| {
                    (pos, format!("integer literal {v} is too large"))
                })?))
            }
            Tok::Float(v) => {
                self.bump();
                Ok(Value::Float(v))
            }
            Tok::Str(_) => {
                let mut text = String::new();
                while let Tok::Str(s) = self.peek() {
                    text.push_str(s);
                    self.bump();
                }
                Ok(Value::String(text))
            }
            Tok::WStr(_) => {
                let mut text = String::new();
                while let Tok::WStr(s) = self.peek() {
                    text.push_str(s);
                    self.bump();
                }
                Ok(Value::WString(text))
            }
            Tok::Char => Err((
                pos,
                "character literals are not supported (roslite does not implement IDL 'char'); \
                 write the character's code as an integer"
                    .to_owned(),
            )),
            Tok::Ident(word) if word == "TRUE" || word == "FALSE" => {
                self.bump();
                Ok(Value::Bool(word == "TRUE"))
            }
            Tok::Ident(word) if word == "true" || word == "false" => Err((
                pos,
                format!(
                    "IDL booleans are written in capitals: expected '{}', found '{word}'",
                    word.to_ascii_uppercase()
                ),
            )),
            Tok::Ident(_) | Tok::Punct("::") => {
                Ok(Value::Name(self.scoped_name("a name")?.join("::")))
            }
            _ => Err(self.unexpected("a value")),
        }
    }
}

//! The filter language, construct by construct and error by error, on test_msgs' and the
//! built-in packages' generated types (their type descriptions are what subscriptions use).

use roslite_cdr::{CdrWriter, Endianness};
use roslite_msgs::description::{FieldDescription, IndividualTypeDescription, TypeDescription};
use roslite_msgs::geometry_msgs::msg::{Point, Point32, Polygon};
use roslite_msgs::sensor_msgs::msg::Image;
use roslite_msgs::std_msgs::msg::{Header, Int32, String as RosString};
use roslite_msgs::Message;
use test_msgs::msg::{
    Arrays, BasicTypes, BoundedSequences, MultiNested, Nested, UnboundedSequences,
};

use super::{
    ContentFilter, ContentFilterError, ContentFilterErrorKind as Kind, ContentFilterOptions,
    Location,
};

fn compile<T: Message>(
    expression: &str,
    parameters: &[&str],
) -> Result<Option<ContentFilter>, ContentFilterError> {
    let description = T::TYPE_DESCRIPTION.expect("generated types carry a description");
    ContentFilter::new(
        description,
        ContentFilterOptions::new(expression, parameters.iter().copied()),
    )
}

/// Whether `message` passes, checked the same in both byte orders and through
/// `passes_message`.
fn passes_with<T: Message>(expression: &str, parameters: &[&str], message: &T) -> bool {
    let filter = compile::<T>(expression, parameters)
        .unwrap_or_else(|e| panic!("`{expression}` should compile: {e}"))
        .expect("not empty");
    let little = filter
        .passes(&roslite_cdr::to_vec(message, Endianness::Little).unwrap())
        .unwrap();
    let big = filter
        .passes(&roslite_cdr::to_vec(message, Endianness::Big).unwrap())
        .unwrap();
    assert_eq!(little, big, "`{expression}` reads both byte orders alike");
    assert_eq!(filter.passes_message(message).unwrap(), little);
    little
}

fn passes<T: Message>(expression: &str, message: &T) -> bool {
    passes_with(expression, &[], message)
}

fn refused<T: Message>(expression: &str, parameters: &[&str]) -> ContentFilterError {
    match compile::<T>(expression, parameters) {
        Err(e) => e,
        Ok(_) => panic!("`{expression}` should be refused"),
    }
}

fn int(data: i32) -> Int32 {
    Int32 { data }
}

fn text(data: &str) -> RosString {
    RosString { data: data.into() }
}

/// Which of `0..6` pass `expression` on std_msgs/Int32.
fn ints_passing(expression: &str) -> Vec<i32> {
    (0..6).filter(|&i| passes(expression, &int(i))).collect()
}

// ---- constructs ------------------------------------------------------------------------------

#[test]
fn an_empty_expression_is_no_filter() {
    assert!(compile::<Int32>("", &[]).unwrap().is_none());
    assert!(compile::<Int32>("", &["'unused'"]).unwrap().is_none());
    assert!(
        ContentFilter::for_type("pkg/msg/T", None, ContentFilterOptions::default())
            .unwrap()
            .is_none()
    );
}

#[test]
fn every_comparison_operator_on_either_side() {
    assert_eq!(ints_passing("data = 2"), [2]);
    assert_eq!(ints_passing("data <> 2"), [0, 1, 3, 4, 5]);
    assert_eq!(ints_passing("data != 2"), [0, 1, 3, 4, 5]);
    assert_eq!(ints_passing("data < 2"), [0, 1]);
    assert_eq!(ints_passing("data <= 2"), [0, 1, 2]);
    assert_eq!(ints_passing("data > 2"), [3, 4, 5]);
    assert_eq!(ints_passing("data >= 2"), [2, 3, 4, 5]);
    // A constant on the left reads as written: 3 > data.
    assert_eq!(ints_passing("3 > data"), [0, 1, 2]);
    assert_eq!(ints_passing("3<=data"), [3, 4, 5]);
    assert_eq!(ints_passing("data=2"), [2]);
}

#[test]
fn between_includes_its_bounds_and_not_between_excludes_them() {
    assert_eq!(ints_passing("data BETWEEN 2 AND 4"), [2, 3, 4]);
    assert_eq!(ints_passing("data between 2 and 4"), [2, 3, 4]);
    assert_eq!(ints_passing("data NOT BETWEEN 2 AND 4"), [0, 1, 5]);
    assert_eq!(ints_passing("data not between 2 and 4"), [0, 1, 5]);
    // The AND after the bounds is a connective.
    assert_eq!(
        ints_passing("data BETWEEN 1 AND 4 AND data <> 3"),
        [1, 2, 4]
    );
    // Bounds the wrong way round hold for nothing, as in SQL.
    assert_eq!(ints_passing("data BETWEEN 4 AND 2"), Vec::<i32>::new());
}

#[test]
fn and_or_not_and_parentheses() {
    assert_eq!(ints_passing("data > 1 AND data < 4"), [2, 3]);
    assert_eq!(ints_passing("data = 1 OR data = 4 OR data = 5"), [1, 4, 5]);
    assert_eq!(ints_passing("NOT data = 1"), [0, 2, 3, 4, 5]);
    assert_eq!(ints_passing("not not data = 1"), [1]);
    // NOT takes the condition right after it, as SQL and Fast DDS do.
    assert_eq!(ints_passing("NOT data = 1 AND data < 3"), [0, 2]);
    assert_eq!(
        ints_passing("data > 1 AND NOT data = 3 AND data < 5"),
        [2, 4]
    );
    assert_eq!(ints_passing("NOT (data = 1 OR data = 2)"), [0, 3, 4, 5]);
    assert_eq!(ints_passing("(data = 1 OR data = 2) AND data > 1"), [2]);
    assert_eq!(ints_passing("data = 1 OR (data = 2 AND data > 1)"), [1, 2]);
    assert_eq!(ints_passing("(data=2)or(data=3)"), [2, 3]);
    assert_eq!(ints_passing("((((data = 5))))"), [5]);
}

#[test]
fn integer_literals_hex_signs_and_booleans() {
    assert_eq!(ints_passing("data = 0x3"), [3]);
    assert_eq!(ints_passing("data = 0X04"), [4]);
    assert_eq!(ints_passing("data = +2"), [2]);
    assert!(passes("data = -0x2", &int(-2)));
    assert!(passes("data = -2147483648", &int(i32::MIN)));
    // A boolean meets an integer as 0 or 1 (Fast DDS's promotion).
    assert_eq!(ints_passing("data = TRUE"), [1]);
    assert_eq!(ints_passing("data = false"), [0]);
    let basic = BasicTypes {
        bool_value: true,
        ..BasicTypes::default()
    };
    assert!(passes("bool_value = TRUE", &basic));
    assert!(passes("bool_value = 1", &basic));
    assert!(!passes("bool_value = FALSE", &basic));
    assert!(passes("bool_value > FALSE", &basic));
}

#[test]
fn unsigned_and_signed_64_bit_values_compare_exactly() {
    let basic = BasicTypes {
        uint64_value: u64::MAX,
        int64_value: i64::MIN,
        byte_value: 255,
        uint8_value: 200,
        int8_value: -100,
        ..BasicTypes::default()
    };
    assert!(passes("uint64_value = 18446744073709551615", &basic));
    assert!(passes("uint64_value > -1", &basic));
    assert!(passes("int64_value = -9223372036854775808", &basic));
    assert!(passes("int64_value < uint64_value", &basic));
    // byte and uint8 are unsigned, int8 is signed.
    assert!(passes("byte_value = 255 AND uint8_value > 127", &basic));
    assert!(passes("int8_value = -100", &basic));
}

#[test]
fn floats_compare_at_the_precision_of_the_field() {
    let basic = BasicTypes {
        float32_value: 0.1,
        float64_value: 0.1,
        int32_value: 16_777_217,
        ..BasicTypes::default()
    };
    // 0.1 read as a float32 equals the float32 field, as a float64 the float64 field.
    assert!(passes("float32_value = 0.1", &basic));
    assert!(passes("float64_value = 0.1", &basic));
    assert!(passes(
        "float32_value = 1e-1 AND float64_value = 1.0E-1",
        &basic
    ));
    // float32 against float64: both as float64, where 0.1f32 is not 0.1.
    assert!(!passes("float32_value = float64_value", &basic));
    assert!(passes("float32_value > float64_value", &basic));
    // An integer field against a float constant: exactly enough (float64).
    assert!(passes("int32_value = 16777217.0", &basic));
    assert!(!passes("int32_value = 16777216.0", &basic));
    assert!(passes("int32_value > 2.5", &basic));
    // An integer constant against a float field.
    assert!(passes("float64_value < 1", &basic));
}

#[test]
fn nan_is_unordered() {
    let basic = BasicTypes {
        float64_value: f64::NAN,
        float32_value: f32::NAN,
        ..BasicTypes::default()
    };
    for op in ["=", "<", "<=", ">", ">="] {
        assert!(!passes(&format!("float64_value {op} 1"), &basic), "{op}");
        assert!(!passes(&format!("float32_value {op} 1.5"), &basic), "{op}");
    }
    assert!(passes("float64_value <> 1", &basic));
    assert!(passes("float64_value != float64_value", &basic));
    assert!(!passes("float64_value BETWEEN 0 AND 1", &basic));
    assert!(passes("float64_value NOT BETWEEN 0 AND 1", &basic));
}

#[test]
fn strings_compare_byte_by_byte_and_open_with_either_quote() {
    let words = ["a", "abc", "abd", "b", "ab", ""];
    let passing = |expression: &str| -> Vec<&str> {
        words
            .iter()
            .copied()
            .filter(|w| passes(expression, &text(w)))
            .collect()
    };
    assert_eq!(passing("data = 'abc'"), ["abc"]);
    assert_eq!(passing("data = `abc'"), ["abc"]);
    assert_eq!(passing("data = ''"), [""]);
    assert_eq!(passing("data > 'abc'"), ["abd", "b"]);
    assert_eq!(passing("data <> 'abc'"), ["a", "abd", "b", "ab", ""]);
    assert_eq!(passing("data BETWEEN 'ab' AND 'abd'"), ["abc", "abd", "ab"]);
    // A one-byte literal is a char to Fast DDS and compares as a string.
    assert_eq!(passing("data = 'a'"), ["a"]);
    assert_eq!(passing("'b' <= data"), ["b"]);
    // Outside ASCII, and spaces inside.
    assert!(passes("data = 'Hellö wörld'", &text("Hellö wörld")));
}

#[test]
fn like_matches_percent_underscore_and_fast_dds_star_and_question_mark() {
    let words = ["a", "abc", "axc", "a.c", "abd", "b", "ab", ""];
    let passing = |expression: &str| -> Vec<&str> {
        words
            .iter()
            .copied()
            .filter(|w| passes(expression, &text(w)))
            .collect()
    };
    assert_eq!(
        passing("data LIKE 'a%'"),
        ["a", "abc", "axc", "a.c", "abd", "ab"]
    );
    assert_eq!(
        passing("data LIKE 'a*'"),
        ["a", "abc", "axc", "a.c", "abd", "ab"]
    );
    assert_eq!(passing("data LIKE 'a_c'"), ["abc", "axc", "a.c"]);
    assert_eq!(passing("data LIKE 'a?c'"), ["abc", "axc", "a.c"]);
    assert_eq!(passing("data like '%c'"), ["abc", "axc", "a.c"]);
    assert_eq!(passing("data LIKE '%'"), words);
    assert_eq!(passing("data LIKE ''"), [""]);
    // Anything else matches itself: `.` is no wildcard (it is in Fast DDS's regex).
    assert_eq!(passing("data LIKE 'a.c'"), ["a.c"]);
    assert_eq!(passing("data LIKE '%b%'"), ["abc", "abd", "b", "ab"]);
    assert_eq!(passing("NOT data LIKE 'a%'"), ["b", ""]);
    // `_` is one character, not one byte.
    assert!(passes("data LIKE 'H_llö'", &text("Hällö")));
    assert!(!passes("data LIKE 'H__llö'", &text("Hällö")));
    // The right side is the pattern, a field's value too.
    assert_eq!(passing("'abc' LIKE data"), ["abc"]);
    assert!(passes("'abc' LIKE data", &text("a%")));
    assert!(passes_with("data LIKE %0", &["'ab%'"], &text("abd")));
}

#[test]
fn like_agrees_with_a_plain_recursive_matcher() {
    // Reference: the definition, by recursion over characters.
    fn reference(text: &[char], pattern: &[char]) -> bool {
        match pattern.split_first() {
            None => text.is_empty(),
            Some(('%' | '*', rest)) => (0..=text.len()).any(|skip| reference(&text[skip..], rest)),
            Some(('_' | '?', rest)) => !text.is_empty() && reference(&text[1..], rest),
            Some((c, rest)) => text.first() == Some(c) && reference(&text[1..], rest),
        }
    }
    let alphabet = ['a', 'b', 'é', '%', '_'];
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let word = |max: u64, next: &mut dyn FnMut() -> u64| -> String {
        (0..next() % max)
            .map(|_| alphabet[(next() % 5) as usize])
            .collect()
    };
    for _ in 0..20_000 {
        let text: String = word(7, &mut next).replace(['%', '_'], "a");
        let pattern = word(6, &mut next);
        let (t, p): (Vec<char>, Vec<char>) = (text.chars().collect(), pattern.chars().collect());
        assert_eq!(
            super::eval::like(&text, &pattern),
            reference(&t, &p),
            "`{text}` LIKE `{pattern}`"
        );
    }
}

#[test]
fn parameters_are_literals_typed_by_how_they_are_written() {
    assert!(passes_with("data = %0", &["2"], &int(2)));
    assert!(passes_with(
        "data BETWEEN %0 AND %1",
        &["1", "0x3"],
        &int(3)
    ));
    assert!(!passes_with("data BETWEEN %1 AND %0", &["1", "3"], &int(2)));
    assert!(passes_with("data = %0", &["'abc'"], &text("abc")));
    assert!(passes_with("data = %0", &["`abc'"], &text("abc")));
    assert!(passes_with("data > %0", &["1.5"], &int(2)));
    assert!(passes_with("data = %0", &["TRUE"], &int(1)));
    // Spaces around a parameter do not count.
    assert!(passes_with("data = %0", &[" 7 "], &int(7)));
    // Parameters the expression does not use may be anything; %10 is two digits.
    let many: Vec<String> = (0..11).map(|i| i.to_string()).collect();
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    assert!(passes_with("data = %10", &many, &int(10)));
    assert!(passes_with("data = %0", &["4", "not a literal"], &int(4)));
    // One parameter used twice.
    assert!(passes_with("data >= %0 AND %0 >= data", &["5"], &int(5)));
}

#[test]
fn nested_fields_array_and_sequence_elements() {
    let nested = Nested {
        basic_types_value: BasicTypes {
            int32_value: 7,
            ..BasicTypes::default()
        },
    };
    assert!(passes("basic_types_value.int32_value = 7", &nested));

    let mut arrays = Arrays {
        int32_values: [1, 2, 3],
        string_values: ["x".into(), "yy".into(), "zzz".into()],
        alignment_check: 42,
        ..Arrays::default()
    };
    arrays.basic_types_values[2].float64_value = 2.5;
    assert!(passes(
        "int32_values[2] = 3 AND int32_values[0] = 1",
        &arrays
    ));
    assert!(passes("string_values[1] = 'yy'", &arrays));
    assert!(passes("basic_types_values[2].float64_value = 2.5", &arrays));
    // The last field, after every array: the skips keep the alignment right.
    assert!(passes("alignment_check = 42", &arrays));

    let sequences = UnboundedSequences {
        int64_values: vec![10, 20].into(),
        bool_values: vec![false, true],
        string_values: vec!["a".into(), "b".into()],
        basic_types_values: vec![
            BasicTypes::default(),
            BasicTypes {
                uint16_value: 9,
                ..BasicTypes::default()
            },
        ],
        alignment_check: -1,
        ..UnboundedSequences::default()
    };
    assert!(passes(
        "int64_values[1] = 20 AND bool_values[1] = TRUE",
        &sequences
    ));
    assert!(passes("basic_types_values[1].uint16_value = 9", &sequences));
    assert!(passes("string_values[0] < string_values[1]", &sequences));
    assert!(passes("alignment_check = -1", &sequences));
    // An element the message lacks: the message does not pass, whatever the rest says.
    assert!(!passes("int64_values[5] = 0", &sequences));
    assert!(!passes("NOT int64_values[5] = 0", &sequences));
    assert!(!passes(
        "int64_values[5] = 0 OR alignment_check = -1",
        &sequences
    ));

    let bounded = BoundedSequences {
        int16_values: vec![4, 5, 6].into(),
        ..BoundedSequences::default()
    };
    assert!(passes("int16_values[2] = 6", &bounded));

    let mut multi = MultiNested::default();
    multi.array_of_arrays[1].int32_values[2] = 12;
    multi.unbounded_sequence_of_unbounded_sequences = vec![
        UnboundedSequences::default(),
        UnboundedSequences {
            string_values: vec!["deep".into()],
            ..UnboundedSequences::default()
        },
    ];
    assert!(passes("array_of_arrays[1].int32_values[2] = 12", &multi));
    assert!(passes(
        "unbounded_sequence_of_unbounded_sequences[1].string_values[0] = 'deep'",
        &multi
    ));
    assert!(passes(
        "array_of_arrays[1].int32_values[2] = 12 AND \
         unbounded_sequence_of_unbounded_sequences[1].string_values[0] LIKE 'de%'",
        &multi
    ));
}

#[test]
fn fields_compare_with_fields() {
    let basic = BasicTypes {
        int32_value: 5,
        int16_value: 5,
        float64_value: 5.0,
        uint8_value: 6,
        ..BasicTypes::default()
    };
    assert!(passes("int32_value = int16_value", &basic));
    assert!(passes("int32_value = float64_value", &basic));
    assert!(passes("uint8_value > int32_value", &basic));
    let polygon = Polygon {
        points: vec![
            Point32 {
                x: 1.0,
                y: 2.0,
                z: 3.0,
            },
            Point32 {
                x: 1.0,
                y: 0.0,
                z: 0.0,
            },
        ],
    };
    assert!(passes(
        "points[0].x = points[1].x AND points[0].z > points[0].y",
        &polygon
    ));
}

#[test]
fn a_filter_reads_only_up_to_the_last_field_it_names() {
    let image = Image {
        header: Header {
            frame_id: "camera".into(),
            ..Header::default()
        },
        encoding: "rgb8".into(),
        data: vec![7; 1000].into(),
        ..Image::default()
    };
    let bytes = roslite_cdr::to_vec(&image, Endianness::Little).unwrap();
    let filter = compile::<Image>("header.frame_id = 'camera'", &[])
        .unwrap()
        .unwrap();
    assert_eq!(filter.passes(&bytes), Ok(true));
    // The pixels are never read: without them the answer is the same.
    assert_eq!(filter.passes(&bytes[..40]), Ok(true));
    // Bytes that end before the field are not a message of the type.
    assert!(filter.passes(&bytes[..10]).is_err());
    assert!(filter.passes(&[0, 1]).is_err());
    // A field after the pixels is read past them.
    let late = compile::<Image>("step = 0 AND encoding = 'rgb8'", &[])
        .unwrap()
        .unwrap();
    assert_eq!(late.passes(&bytes), Ok(true));
    let point = compile::<Point>("z > 0", &[]).unwrap().unwrap();
    assert_eq!(
        point.passes_message(&Point {
            x: 0.0,
            y: 0.0,
            z: 1.0
        }),
        Ok(true)
    );
}

/// A hand-written description: `char c`, `wstring w`, `int32 n` (IDL char and a wstring, which
/// no shipped message has before another field).
fn char_and_wstring() -> &'static TypeDescription {
    static FIELDS: [FieldDescription; 3] =
        [field("c", 13, ""), field("w", 18, ""), field("n", 6, "")];
    static TYPE: IndividualTypeDescription = IndividualTypeDescription {
        type_name: "pkg/msg/CharAndWString",
        fields: &FIELDS,
        encoding: "idl",
        raw_file_contents: "",
    };
    static DESCRIPTION: TypeDescription = TypeDescription {
        type_description: &TYPE,
        referenced_type_descriptions: &[],
    };
    &DESCRIPTION
}

const fn field(name: &'static str, type_id: u8, nested: &'static str) -> FieldDescription {
    FieldDescription {
        name,
        type_id,
        capacity: 0,
        string_capacity: 0,
        nested_type_name: nested,
        default_value: "",
    }
}

fn char_and_wstring_bytes(c: u8, w: &str, n: i32, order: Endianness) -> Vec<u8> {
    let mut writer = CdrWriter::new(order);
    writer.write_u8(c);
    writer.write_wstring(w).unwrap();
    writer.write_i32(n);
    writer.finish()
}

#[test]
fn char_fields_compare_as_text_and_wstrings_are_skipped() {
    let filter = |expression: &str| {
        ContentFilter::new(
            char_and_wstring(),
            ContentFilterOptions::new(expression, [""; 0]),
        )
        .unwrap()
        .unwrap()
    };
    for order in [Endianness::Little, Endianness::Big] {
        let bytes = char_and_wstring_bytes(b'x', "ハロー", 77, order);
        assert_eq!(filter("c = 'x'").passes(&bytes), Ok(true));
        assert_eq!(filter("c < 'y' AND c >= 'x'").passes(&bytes), Ok(true));
        assert_eq!(filter("n = 77").passes(&bytes), Ok(true));
        assert_eq!(filter("c = 'x' AND n > 70").passes(&bytes), Ok(true));
    }
    let refused = |expression: &str| {
        ContentFilter::new(
            char_and_wstring(),
            ContentFilterOptions::new(expression, [""; 0]),
        )
        .unwrap_err()
        .kind()
        .clone()
    };
    assert_eq!(
        refused("c LIKE 'x'"),
        Kind::LikeNeedsStringField,
        "a char is no string field"
    );
    assert!(matches!(refused("c = 5"), Kind::Incompatible { .. }));
    assert!(matches!(
        refused("w = 'x'"),
        Kind::UnsupportedFieldType { .. }
    ));
}

// ---- errors ----------------------------------------------------------------------------------

/// The error's kind and the byte offset it points at in the expression.
fn refused_at<T: Message>(expression: &str, parameters: &[&str]) -> (Kind, usize) {
    let error = refused::<T>(expression, parameters);
    match error.location() {
        Location::Expression { offset } => (error.kind().clone(), *offset),
        other => panic!("`{expression}`: {error} is located at {other:?}"),
    }
}

#[test]
fn lexical_errors_say_what_and_where() {
    assert_eq!(
        refused_at::<Int32>("data = 5 ;", &[]),
        (Kind::UnexpectedCharacter(';'), 9)
    );
    assert_eq!(
        refused_at::<Int32>("data # 5", &[]).0,
        Kind::UnexpectedCharacter('#')
    );
    assert_eq!(
        refused_at::<RosString>("data = 'abc", &[]),
        (Kind::UnterminatedString, 7)
    );
    assert_eq!(
        refused_at::<RosString>("data = 'a\nb'", &[]).0,
        Kind::UnterminatedString
    );
    let long = format!("data = '{}'", "x".repeat(256));
    assert_eq!(
        refused_at::<RosString>(&long, &[]).0,
        Kind::StringTooLong { len: 256 }
    );
    assert!(compile::<RosString>(&format!("data = '{}'", "x".repeat(255)), &[]).is_ok());
    for (expression, at) in [
        ("data = 2.", 7),
        ("data = .5", 7),
        ("data = 1e", 7),
        ("data = 0x", 7),
    ] {
        let (kind, offset) = refused_at::<Int32>(expression, &[]);
        assert!(
            matches!(kind, Kind::MalformedNumber { .. }),
            "{expression}: {kind:?}"
        );
        assert_eq!(offset, at, "{expression}");
    }
    assert_eq!(
        refused_at::<Int32>("data = 18446744073709551616", &[]).0,
        Kind::IntegerOutOfRange
    );
    assert_eq!(
        refused_at::<Int32>("data = -9223372036854775809", &[]).0,
        Kind::IntegerOutOfRange
    );
    assert!(compile::<Int32>("data = -9223372036854775808", &[]).is_ok());
    assert_eq!(
        refused_at::<Int32>("data Between 1 AND 2", &[]),
        (
            Kind::KeywordCase {
                found: "Between".into(),
                keyword: "BETWEEN"
            },
            5
        )
    );
    assert_eq!(
        refused_at::<Int32>("data = True", &[]).0,
        Kind::KeywordCase {
            found: "True".into(),
            keyword: "TRUE"
        }
    );
    assert_eq!(refused_at::<Int32>("data = %100", &[]).1, 7);
}

#[test]
fn grammar_errors_say_what_was_expected() {
    let expected = |expression: &str| match refused_at::<Int32>(expression, &[]) {
        (Kind::Expected { expected, found }, at) => (expected, found, at),
        other => panic!("`{expression}`: {other:?}"),
    };
    assert_eq!(
        expected("data ="),
        (
            "a field, a literal or a parameter",
            "the end of the expression".into(),
            6
        )
    );
    assert_eq!(
        expected("data 5").0,
        "a comparison (= <> != < <= > >=), LIKE or BETWEEN"
    );
    assert_eq!(expected("(data = 1").0, "AND, OR or `)`");
    assert_eq!(
        expected("data = 1)").0,
        "AND, OR or the end of the expression"
    );
    assert_eq!(expected("data == 1").2, 5);
    assert_eq!(
        expected("data BETWEEN 1 OR 2").0,
        "AND between the bounds of BETWEEN"
    );
    assert_eq!(
        expected("data BETWEEN data AND 2").0,
        "a literal or a parameter (BETWEEN's bounds are constants)"
    );
    assert_eq!(
        expected("5 BETWEEN 1 AND 2").0,
        "a field before BETWEEN (field BETWEEN low AND high)"
    );
    assert_eq!(
        expected("data . x = 1").0,
        "a field name without spaces inside (a.b[0])"
    );
    assert_eq!(expected("data[x] = 1").0, "an index (digits) inside [ ]");
    assert_eq!(expected("   ").0, "a field, a literal or a parameter");
    assert_eq!(refused_at::<Int32>("1 = 1", &[]), (Kind::NoField, 0));
    assert_eq!(refused_at::<Int32>("%0 = 1", &["1"]), (Kind::NoField, 0));
    assert_eq!(
        refused_at::<RosString>("'a' LIKE 'b'", &[]).0,
        Kind::NoField
    );
    assert!(matches!(
        refused_at::<RosString>("data MATCH 'a.*'", &[]),
        (Kind::Unsupported { .. }, 5)
    ));
}

#[test]
fn and_and_or_side_by_side_need_parentheses() {
    assert_eq!(
        refused_at::<Int32>("data = 1 OR data = 2 AND data = 3", &[]),
        (Kind::MixedAndOr, 21)
    );
    assert_eq!(
        refused_at::<Int32>("data = 1 AND data = 2 OR data = 3", &[]).0,
        Kind::MixedAndOr
    );
    assert_eq!(
        refused_at::<Int32>("NOT data = 1 AND data = 2 or data = 3", &[]).0,
        Kind::MixedAndOr
    );
    assert!(compile::<Int32>("(data = 1 OR data = 2) AND data = 3", &[]).is_ok());
}

#[test]
fn limits_on_length_depth_and_parameters() {
    let deep = format!("{}data = 1{}", "(".repeat(300), ")".repeat(300));
    assert_eq!(
        refused_at::<Int32>(&deep, &[]),
        (Kind::TooDeep { max: 256 }, 256)
    );
    let nots = format!("{}data = 1", "NOT ".repeat(300));
    assert_eq!(
        refused_at::<Int32>(&nots, &[]).0,
        Kind::TooDeep { max: 256 }
    );
    let fine = format!("{}data = 1{}", "(".repeat(200), ")".repeat(200));
    assert!(compile::<Int32>(&fine, &[]).is_ok());
    let long = format!("data = 1{}", " OR data = 1".repeat(2000));
    let error = refused::<Int32>(&long, &[]);
    assert!(matches!(error.kind(), Kind::TooLong { max: 16384, .. }));
    assert_eq!(error.location(), &Location::Filter);
    let params: Vec<&str> = vec!["1"; 101];
    let error = refused::<Int32>("data = %0", &params);
    assert_eq!(error.kind(), &Kind::TooManyParameters { given: 101 });
    assert!(compile::<Int32>("data = %99", &vec!["1"; 100]).is_ok());
}

#[test]
fn unknown_fields_list_the_fields_that_exist() {
    let (kind, at) = refused_at::<Point>("z > 0 AND w > 0", &[]);
    assert_eq!(
        kind,
        Kind::UnknownField {
            name: "w".into(),
            type_name: "geometry_msgs/msg/Point".into(),
            fields: vec!["x".into(), "y".into(), "z".into()],
        }
    );
    assert_eq!(at, 10);
    let error = refused::<Image>("header.frame = 'x'", &[]);
    assert_eq!(
        error.to_string(),
        "content filter expression, column 8: std_msgs/msg/Header has no field `frame`; its \
         fields are: stamp, frame_id\n  header.frame = 'x'\n         ^"
    );
}

#[test]
fn field_shape_errors() {
    assert_eq!(
        refused_at::<Int32>("data.x = 1", &[]),
        (
            Kind::NoFieldsIn {
                path: "data".into(),
                ty: "an int32".into()
            },
            5
        )
    );
    assert_eq!(
        refused_at::<Arrays>("int32_values = 1", &[]).0,
        Kind::IndexNeeded {
            path: "int32_values".into(),
            ty: "an array of 3 int32".into()
        }
    );
    assert_eq!(
        refused_at::<Int32>("data[0] = 1", &[]).0,
        Kind::NotIndexable {
            path: "data".into(),
            ty: "an int32".into()
        }
    );
    assert_eq!(
        refused_at::<Arrays>("int32_values[3] = 1", &[]).0,
        Kind::IndexOutOfBounds {
            path: "int32_values".into(),
            index: 3,
            len: 3,
            array: true
        }
    );
    assert_eq!(
        refused_at::<BoundedSequences>("int32_values[3] = 1", &[]).0,
        Kind::IndexOutOfBounds {
            path: "int32_values".into(),
            index: 3,
            len: 3,
            array: false
        }
    );
    // An unbounded sequence takes any index.
    assert!(compile::<UnboundedSequences>("int32_values[4000000] = 1", &[]).is_ok());
    assert_eq!(
        refused_at::<Nested>("basic_types_value = 1", &[]).0,
        Kind::NotAValue {
            path: "basic_types_value".into(),
            ty: "test_msgs/msg/BasicTypes".into(),
            first_field: Some("bool_value".into())
        }
    );
    assert_eq!(
        refused_at::<Arrays>("basic_types_values[0].x.y = 1", &[]).0,
        Kind::UnknownField {
            name: "x".into(),
            type_name: "test_msgs/msg/BasicTypes".into(),
            fields: BasicTypes::TYPE_DESCRIPTION
                .unwrap()
                .type_description
                .fields
                .iter()
                .map(|f| f.name.to_owned())
                .collect(),
        }
    );
    assert_eq!(
        refused_at::<test_msgs::msg::WStrings>("wstring_value = 'a'", &[]).0,
        Kind::UnsupportedFieldType {
            path: "wstring_value".into(),
            ty: "a wstring".into()
        }
    );
}

#[test]
fn incompatible_types_say_which_sides_and_how_to_fix() {
    let (kind, at) = refused_at::<RosString>("data = 5", &[]);
    assert!(
        matches!(&kind, Kind::Incompatible { left, right, .. }
            if left == "field `data` (a string)" && right == "the integer 5"),
        "{kind:?}"
    );
    assert_eq!(at, 7, "points at the constant, which is what to change");
    assert!(matches!(
        refused_at::<Int32>("data = 'x'", &[]).0,
        Kind::Incompatible { .. }
    ));
    assert!(matches!(
        refused_at::<BasicTypes>("bool_value = 1.5", &[]).0,
        Kind::Incompatible { .. }
    ));
    assert!(matches!(
        refused_at::<BasicTypes>("bool_value = float32_value", &[]).0,
        Kind::Incompatible { .. }
    ));
    assert!(matches!(
        refused_at::<Int32>("data BETWEEN 1 AND 'z'", &[]).0,
        Kind::Incompatible { .. }
    ));
    assert_eq!(
        refused_at::<Int32>("data LIKE 'a%'", &[]).0,
        Kind::LikeNeedsStringField
    );
    // A parameter of the wrong type points into the parameter.
    let error = refused::<Int32>("data = %0", &["'2'"]);
    assert!(
        matches!(error.kind(), Kind::Incompatible { right, .. } if right == "parameter %0 (the text '2')")
    );
    assert_eq!(
        error.location(),
        &Location::Parameter {
            index: 0,
            offset: 0
        }
    );
}

#[test]
fn parameter_errors() {
    assert_eq!(
        refused_at::<Int32>("data = %3", &["1", "2"]),
        (Kind::MissingParameter { index: 3, given: 2 }, 7)
    );
    assert_eq!(
        refused::<Int32>("data = %0", &[]).to_string(),
        "content filter expression, column 8: %0 stands for expression parameter 0, but no \
         parameters are given\n  data = %0\n         ^"
    );
    for (parameter, offset) in [("abc", 0), ("5 6", 0), ("", 0), (" data", 1), ("%0", 0)] {
        let error = refused::<RosString>("data = %0", &[parameter]);
        assert_eq!(error.kind(), &Kind::ParameterNotALiteral, "{parameter:?}");
        assert_eq!(
            error.location(),
            &Location::Parameter { index: 0, offset },
            "{parameter:?}"
        );
    }
    let error = refused::<RosString>("data = %1", &["'ok'", "'open"]);
    assert_eq!(error.kind(), &Kind::UnterminatedString);
    assert_eq!(
        error.location(),
        &Location::Parameter {
            index: 1,
            offset: 0
        }
    );
    assert!(error
        .to_string()
        .starts_with("content filter parameter %1: "));
}

#[test]
fn type_description_errors() {
    let error = ContentFilter::for_type(
        "pkg/msg/Handwritten",
        None,
        ContentFilterOptions::new("x = 1", [""; 0]),
    )
    .unwrap_err();
    assert_eq!(
        error.kind(),
        &Kind::NoTypeDescription {
            type_name: "pkg/msg/Handwritten".into()
        }
    );
    static FIELDS: [FieldDescription; 1] = [field("inner", 1, "pkg/msg/Missing")];
    static TYPE: IndividualTypeDescription = IndividualTypeDescription {
        type_name: "pkg/msg/Outer",
        fields: &FIELDS,
        encoding: "msg",
        raw_file_contents: "",
    };
    let broken = TypeDescription {
        type_description: &TYPE,
        referenced_type_descriptions: &[],
    };
    let error =
        ContentFilter::new(&broken, ContentFilterOptions::new("inner.x = 1", [""; 0])).unwrap_err();
    assert_eq!(
        error.kind(),
        &Kind::IncompleteTypeDescription {
            missing: "pkg/msg/Missing".into()
        }
    );
}

#[test]
fn every_error_displays_its_location() {
    let error = refused::<Int32>("data = 1 OR\n  data = 2 AND data = 3", &[]);
    let shown = error.to_string();
    assert!(
        shown.starts_with("content filter expression, column 24: AND and OR"),
        "{shown}"
    );
    assert!(
        shown.ends_with("\n    data = 2 AND data = 3\n             ^"),
        "{shown}"
    );
}

//! Content-filtered topics on the wire (DDS 1.4 §2.2.2.3.3, DDSI-RTPS 2.5 §9.6.2.2 and
//! §9.6.3): the filter a reader announces in its SEDP DATA(r) (`PID_CONTENT_FILTER_PROPERTY`,
//! 0x0035), the signature that names it (§9.6.4.1), and the filter results a writer that
//! evaluated readers' filters for them puts in a sample's inline QoS
//! (`PID_CONTENT_FILTER_INFO`, 0x0055).
//!
//! ```text
//! PID_CONTENT_FILTER_PROPERTY (ContentFilterProperty_t), CDR strings and a sequence:
//! +---------------------------------------------------------------+
//! | string<256> contentFilteredTopicName  ("rt/chatter_filtered_name_0" from rmw_fastrtps)
//! | string<256> relatedTopicName          ("rt/chatter")
//! | string<256> filterClassName           ("DDSSQL")
//! | string      filterExpression          ("data > %0")
//! | sequence<string> expressionParameters ("'10'")
//! +---------------------------------------------------------------+
//!
//! PID_CONTENT_FILTER_INFO (ContentFilterInfo_t):
//! 0...............8..............16..............24..............32
//! +---------------+---------------+---------------+---------------+
//! |                     unsigned long numBitmaps                  |
//! +---------------+---------------+---------------+---------------+
//! ~     long filterResult[numBitmaps]  (bit 31 of the first: filter 0 passed)
//! +---------------+---------------+---------------+---------------+
//! |                    unsigned long numSignatures                |
//! +---------------+---------------+---------------+---------------+
//! ~     octet filterSignatures[numSignatures][16]                 ~
//! +---------------+---------------+---------------+---------------+
//! ```
//!
//! A Fast DDS writer evaluates the filter of every matched reader that announces one it can
//! compile (`ReaderFilterCollection`), and sends a filtered-out sample to that reader as a GAP
//! (reliable) or not at all (best effort), with `PID_CONTENT_FILTER_INFO` on the samples it
//! does send. A reader finding its own signature there knows that this writer filters for it:
//! the numbers it skips are filtered out, not lost.

use crate::error::{EmitError, ParseError};
use crate::parameter_list::{ParameterList, ValueWriter};
use md5::{Digest, Md5};

use super::Value;

/// The filter class of DDS 1.4 Annex B expressions, the one every DDS implements.
pub const DDSSQL: &str = "DDSSQL";

/// The filter a reader announces (`ContentFilterProperty_t`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ContentFilterProperty {
    /// The content-filtered topic's own name; rmw_fastrtps names it
    /// `<topic>_filtered_name_<n>` (`rt/chatter_filtered_name_0`).
    pub content_filtered_topic_name: String,
    /// The topic filtered, as in the reader's `PID_TOPIC_NAME` (`rt/chatter`).
    pub related_topic_name: String,
    /// [`DDSSQL`] for the standard language.
    pub filter_class_name: String,
    pub filter_expression: String,
    pub expression_parameters: Vec<String>,
}

/// The most expression parameters a property may hold (Fast DDS reads at most 100).
pub const MAX_EXPRESSION_PARAMETERS: usize = 100;

impl ContentFilterProperty {
    /// The filter signature (DDSI-RTPS 2.5 §9.6.4.1): the MD5 digest of the names, the class,
    /// the expression and each parameter, each with its terminating NUL, in that order, as
    /// Fast DDS computes it (`ContentFilterUtils::compute_signature`).
    pub fn signature(&self) -> [u8; 16] {
        let mut md5 = Md5::new();
        let strings = [
            &self.content_filtered_topic_name,
            &self.related_topic_name,
            &self.filter_class_name,
            &self.filter_expression,
        ];
        for text in strings.into_iter().chain(&self.expression_parameters) {
            md5.update(text.as_bytes());
            md5.update([0]);
        }
        md5.finalize().into()
    }

    /// Reads the value of `PID_CONTENT_FILTER_PROPERTY`; `None` for a property with an empty
    /// name, class or expression, which announces no filter (Fast DDS writes none such and
    /// reads one as no filter).
    ///
    /// # Errors
    /// [`ParseError::Malformed`] for a string or count beyond its bound or the value's end.
    pub(super) fn read(v: &mut Value<'_>) -> Result<Option<Self>, ParseError> {
        let content_filtered_topic_name = v.name()?;
        let related_topic_name = v.name()?;
        let filter_class_name = v.name()?;
        let filter_expression = v.string(ParameterList::MAX_VALUE_LEN)?;
        let count = v.len(5, MAX_EXPRESSION_PARAMETERS)?;
        let expression_parameters = (0..count).map(|_| v.name()).collect::<Result<_, _>>()?;
        let property = Self {
            content_filtered_topic_name,
            related_topic_name,
            filter_class_name,
            filter_expression,
            expression_parameters,
        };
        let announces_nothing = [
            &property.content_filtered_topic_name,
            &property.related_topic_name,
            &property.filter_class_name,
            &property.filter_expression,
        ]
        .iter()
        .any(|s| s.is_empty());
        Ok((!announces_nothing).then_some(property))
    }

    /// Writes the value of `PID_CONTENT_FILTER_PROPERTY`.
    ///
    /// # Errors
    /// [`EmitError`] for a string with a NUL or a property too long for one parameter.
    pub(super) fn write(&self, v: &mut ValueWriter<'_>) -> Result<(), EmitError> {
        v.string(&self.content_filtered_topic_name)?;
        v.align(4);
        v.string(&self.related_topic_name)?;
        v.align(4);
        v.string(&self.filter_class_name)?;
        v.align(4);
        v.string(&self.filter_expression)?;
        let count =
            u32::try_from(self.expression_parameters.len()).map_err(|_| EmitError::TooLong {
                len: self.expression_parameters.len(),
                max: MAX_EXPRESSION_PARAMETERS,
            })?;
        v.u32(count);
        for parameter in &self.expression_parameters {
            v.string(parameter)?;
            v.align(4);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use roslite_cdr::Endianness;

    use super::*;
    use crate::parameter_list::pid;
    use crate::parameter_list::ParameterListWriter;

    fn chatter_filter() -> ContentFilterProperty {
        ContentFilterProperty {
            content_filtered_topic_name: "rt/chatter_filtered_name_0".into(),
            related_topic_name: "rt/chatter".into(),
            filter_class_name: DDSSQL.into(),
            filter_expression: "data = %0".into(),
            expression_parameters: vec!["'Hello World: 10'".into()],
        }
    }

    /// The property's parameter value as `endianness` writes it.
    fn written(property: &ContentFilterProperty, endianness: Endianness) -> Vec<u8> {
        let mut buf = Vec::new();
        let mut w = ParameterListWriter::new(&mut buf, endianness);
        w.param(pid::CONTENT_FILTER_PROPERTY, |v| property.write(v))
            .unwrap();
        w.finish();
        let list = ParameterList::parse(&buf, endianness).unwrap();
        list.get(pid::CONTENT_FILTER_PROPERTY).unwrap().to_vec()
    }

    #[test]
    fn a_property_reads_back_as_written_in_both_byte_orders() {
        let mut property = chatter_filter();
        property.expression_parameters.push("1".into());
        for e in [Endianness::Little, Endianness::Big] {
            let value = written(&property, e);
            assert_eq!(value.len() % 4, 0);
            let read = ContentFilterProperty::read(&mut Value::new(&value, e)).unwrap();
            assert_eq!(read.as_ref(), Some(&property));
        }
    }

    /// The bytes Fast DDS writes (`ParameterSerializer<ContentFilterProperty>`): each string
    /// padded to 4, the count, the parameters.
    #[test]
    fn the_layout_is_fast_dds_s() {
        let value = written(&chatter_filter(), Endianness::Little);
        let mut expected = Vec::new();
        for text in [
            "rt/chatter_filtered_name_0",
            "rt/chatter",
            "DDSSQL",
            "data = %0",
        ] {
            expected.extend_from_slice(&(text.len() as u32 + 1).to_le_bytes());
            expected.extend_from_slice(text.as_bytes());
            expected.push(0);
            while expected.len() % 4 != 0 {
                expected.push(0);
            }
        }
        expected.extend_from_slice(&1u32.to_le_bytes());
        let parameter = "'Hello World: 10'";
        expected.extend_from_slice(&(parameter.len() as u32 + 1).to_le_bytes());
        expected.extend_from_slice(parameter.as_bytes());
        expected.push(0);
        while expected.len() % 4 != 0 {
            expected.push(0);
        }
        assert_eq!(value, expected);
    }

    #[test]
    fn an_empty_field_announces_no_filter() {
        let mut property = chatter_filter();
        property.filter_expression.clear();
        let value = written(&property, Endianness::Little);
        let read = ContentFilterProperty::read(&mut Value::new(&value, Endianness::Little));
        assert_eq!(read, Ok(None));
    }

    #[test]
    fn malformed_properties_are_refused_without_allocating_what_they_claim() {
        let value = written(&chatter_filter(), Endianness::Little);
        let read =
            |bytes: &[u8]| ContentFilterProperty::read(&mut Value::new(bytes, Endianness::Little));
        // Every truncation.
        // (The last string's two bytes of padding are not read.)
        for len in 0..value.len() - 2 {
            assert_eq!(
                read(&value[..len]),
                Err(ParseError::Malformed),
                "cut at {len}"
            );
        }
        // A string length beyond the value, and beyond any bound.
        let mut huge = value.clone();
        huge[..4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(read(&huge), Err(ParseError::Malformed));
        // 101 parameters, and a count beyond the value.
        // The count, then the parameter's length (4) and its 18 bytes padded to 20.
        let count_at = value.len() - 28;
        for count in [101u32, 100, u32::MAX] {
            let mut many = value.clone();
            many[count_at..count_at + 4].copy_from_slice(&count.to_le_bytes());
            assert_eq!(
                read(&many),
                Err(ParseError::Malformed),
                "{count} parameters"
            );
        }
        // A string without its NUL.
        let mut unterminated = value;
        unterminated[4 + 26] = b'x';
        assert_eq!(read(&unterminated), Err(ParseError::Malformed));
    }

    /// Known-answer: MD5 over the NUL-terminated strings, as Fast DDS hashes them.
    #[test]
    fn the_signature_is_the_md5_of_the_nul_terminated_strings() {
        let expected: [u8; 16] = Md5::digest(
            b"rt/chatter_filtered_name_0\0rt/chatter\0DDSSQL\0data = %0\0'Hello World: 10'\0",
        )
        .into();
        assert_eq!(chatter_filter().signature(), expected);
        let mut other = chatter_filter();
        other.expression_parameters[0] = "'Hello World: 11'".into();
        assert_ne!(chatter_filter().signature(), other.signature());
    }

    /// An inline QoS with `PID_CONTENT_FILTER_INFO` for `signatures`, `passed[i]` each.
    fn info(signatures: &[[u8; 16]], passed: &[bool], e: Endianness) -> Vec<u8> {
        let mut buf = Vec::new();
        let mut w = ParameterListWriter::new(&mut buf, e);
        w.param(pid::CONTENT_FILTER_INFO, |v| {
            let bitmaps = signatures.len().div_ceil(32);
            v.u32(bitmaps as u32);
            for chunk in 0..bitmaps {
                let mut bitmap = 0u32;
                for (i, p) in passed.iter().enumerate().skip(chunk * 32).take(32) {
                    if *p {
                        bitmap |= 1 << (31 - i % 32);
                    }
                }
                v.u32(bitmap);
            }
            v.u32(signatures.len() as u32);
            signatures.iter().for_each(|s| v.bytes(s));
            Ok(())
        })
        .unwrap();
        w.finish();
        buf
    }

    #[test]
    fn filter_info_says_what_the_writer_found_for_a_signature() {
        let ours = chatter_filter().signature();
        let others: Vec<[u8; 16]> = (0..40u8).map(|i| [i; 16]).collect();
        for e in [Endianness::Little, Endianness::Big] {
            // Ours 35th of 41, in the second bitmap, passed and not.
            for passed in [true, false] {
                let mut signatures = others[..34].to_vec();
                signatures.push(ours);
                signatures.extend_from_slice(&others[34..]);
                let mut results = vec![!passed; 41];
                results[34] = passed;
                let qos = info(&signatures, &results, e);
                let list = ParameterList::parse(&qos, e).unwrap();
                assert_eq!(list.content_filter_result(&ours), Some(passed));
            }
            let qos = info(&others[..3], &[true; 3], e);
            let list = ParameterList::parse(&qos, e).unwrap();
            assert_eq!(list.content_filter_result(&ours), None, "not ours");
            let empty = ParameterList::empty(e);
            assert_eq!(empty.content_filter_result(&ours), None, "no filter info");
        }
    }

    #[test]
    fn malformed_filter_info_is_ignored() {
        let ours = chatter_filter().signature();
        let e = Endianness::Little;
        let good = info(&[ours], &[true], e);
        // Value bytes start after the 4-byte parameter header: numBitmaps, bitmap, count, sig.
        let mut wrong_bitmaps = good.clone();
        wrong_bitmaps[4..8].copy_from_slice(&2u32.to_le_bytes());
        let mut huge_count = good.clone();
        huge_count[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
        let mut huge_bitmaps = good;
        huge_bitmaps[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
        for qos in [wrong_bitmaps, huge_count, huge_bitmaps] {
            let list = ParameterList::parse(&qos, e).unwrap();
            assert_eq!(list.content_filter_result(&ours), None);
        }
    }
}

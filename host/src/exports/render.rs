//! Rendering a record's snapshot as a report: PDF (a real document, base-14 Helvetica, no
//! embedded fonts), CSV (`field,value` rows) or JSON.

use pdf_writer::{Content, Finish, Name, Pdf, Rect, Ref, Str};
use serde_json::{Value, json};

use crate::domain::exports::Format;

/// What a report shows.
#[derive(Debug)]
pub(crate) struct Document<'a> {
    pub export_id: &'a str,
    pub exportable_type: &'a str,
    pub exportable_id: &'a str,
    pub generated_at: &'a str,
    pub record: &'a Value,
}

/// The record as (JSON pointer, value) rows, in document order of the keys.
pub(crate) fn rows(record: &Value) -> Vec<(String, String)> {
    fn walk(value: &Value, path: &mut String, out: &mut Vec<(String, String)>) {
        match value {
            Value::Object(map) if !map.is_empty() => {
                for (k, v) in map {
                    let len = path.len();
                    path.push('/');
                    path.push_str(&k.replace('~', "~0").replace('/', "~1"));
                    walk(v, path, out);
                    path.truncate(len);
                }
            }
            Value::Array(items) if !items.is_empty() => {
                for (i, v) in items.iter().enumerate() {
                    let len = path.len();
                    path.push('/');
                    path.push_str(&i.to_string());
                    walk(v, path, out);
                    path.truncate(len);
                }
            }
            Value::String(s) => out.push((path.clone(), s.clone())),
            other => out.push((path.clone(), other.to_string())),
        }
    }
    let mut out = Vec::new();
    walk(record, &mut String::new(), &mut out);
    out
}

/// Renders the document.
pub(crate) fn render(format: Format, doc: &Document<'_>) -> Vec<u8> {
    match format {
        Format::Json => {
            let body = json!({
                "export": {"id": doc.export_id, "generated_at": doc.generated_at},
                "exportable": {"type": doc.exportable_type, "id": doc.exportable_id},
                "record": doc.record,
            });
            serde_json::to_vec_pretty(&body).unwrap_or_default()
        }
        Format::Csv => {
            let mut out = String::from("field,value\r\n");
            for (field, value) in rows(doc.record) {
                out.push_str(&csv_cell(&field));
                out.push(',');
                out.push_str(&csv_cell(&value));
                out.push_str("\r\n");
            }
            out.into_bytes()
        }
        Format::Pdf => pdf(doc),
    }
}

/// One CSV cell. A cell that a spreadsheet would read as a formula (starting with `=`, `+`,
/// `-`, `@`, tab or carriage return) is prefixed with `'` (contract §2), then quoted if needed.
fn csv_cell(text: &str) -> String {
    let neutral;
    let text = if text.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        neutral = format!("'{text}");
        &neutral
    } else {
        text
    };
    if text.contains([',', '"', '\n', '\r']) { format!("\"{}\"", text.replace('"', "\"\"")) } else { text.to_owned() }
}

/// Text in the font's WinAnsi encoding: Latin-1 characters as they are, others as `?`.
fn win_ansi(text: &str) -> Vec<u8> {
    text.chars().map(|c| if (c as u32) < 256 && !c.is_control() { c as u8 } else { b'?' }).collect()
}

/// Splits text into lines of at most `width` characters.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return vec![String::new()];
    }
    chars.chunks(width).map(|c| c.iter().collect()).collect()
}

const PAGE_W: f32 = 595.0;
const PAGE_H: f32 = 842.0;
const MARGIN: f32 = 56.0;
const LEADING: f32 = 14.0;

fn pdf(doc: &Document<'_>) -> Vec<u8> {
    let mut lines: Vec<(f32, String)> = vec![
        (16.0, format!("Report export {}", doc.export_id)),
        (11.0, format!("{} {}", doc.exportable_type, doc.exportable_id)),
        (11.0, format!("Generated {}", doc.generated_at)),
        (11.0, String::new()),
    ];
    for (field, value) in rows(doc.record) {
        for line in wrap(&format!("{field}: {value}"), 90) {
            lines.push((10.0, line));
        }
    }
    let per_page = ((PAGE_H - 2.0 * MARGIN) / LEADING) as usize;
    let pages: Vec<&[(f32, String)]> = lines.chunks(per_page.max(1)).collect();

    let mut pdf = Pdf::new();
    let catalog = Ref::new(1);
    let tree = Ref::new(2);
    let font = Ref::new(3);
    let font_name = Name(b"F1");
    let page_ids: Vec<Ref> = (0..pages.len()).map(|i| Ref::new(4 + 2 * i as i32)).collect();
    pdf.catalog(catalog).pages(tree);
    pdf.pages(tree).kids(page_ids.iter().copied()).count(pages.len() as i32);
    pdf.type1_font(font).base_font(Name(b"Helvetica")).encoding_predefined(Name(b"WinAnsiEncoding"));
    for (i, page_lines) in pages.iter().enumerate() {
        let content_id = Ref::new(5 + 2 * i as i32);
        let mut page = pdf.page(page_ids[i]);
        page.media_box(Rect::new(0.0, 0.0, PAGE_W, PAGE_H)).parent(tree).contents(content_id);
        page.resources().fonts().pair(font_name, font);
        page.finish();
        let mut content = Content::new();
        let mut y = PAGE_H - MARGIN;
        for (size, text) in page_lines.iter() {
            content.begin_text();
            content.set_font(font_name, *size);
            content.next_line(MARGIN, y);
            content.show(Str(&win_ansi(text)));
            content.end_text();
            y -= LEADING;
        }
        pdf.stream(content_id, &content.finish());
    }
    pdf.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(record: &Value) -> Document<'_> {
        Document {
            export_id: "rex_1",
            exportable_type: "Form",
            exportable_id: "frm_1",
            generated_at: "2026-11-22T11:00:38.123Z",
            record,
        }
    }

    #[test]
    fn rows_are_json_pointers_to_leaf_values() {
        let record = json!({"id": "frm_1", "answers": [{"q": "a/b", "ok": true}], "empty": {}, "n": null});
        assert_eq!(
            rows(&record),
            vec![
                ("/answers/0/ok".to_string(), "true".to_string()),
                ("/answers/0/q".to_string(), "a/b".to_string()),
                ("/empty".to_string(), "{}".to_string()),
                ("/id".to_string(), "frm_1".to_string()),
                ("/n".to_string(), "null".to_string()),
            ]
        );
    }

    #[test]
    fn csv_quotes_what_needs_quoting() {
        let record = json!({"title": "Pump, \"main\"", "plain": "x"});
        let csv = String::from_utf8(render(Format::Csv, &doc(&record))).unwrap();
        assert_eq!(csv, "field,value\r\n/plain,x\r\n/title,\"Pump, \"\"main\"\"\"\r\n");
    }

    #[test]
    fn csv_neutralises_formula_cells() {
        let record = json!({
            "a": "=HYPERLINK(\"http://127.0.0.1/x\",\"click\")", "b": "+1", "c": "-2", "d": "@SUM(A1)",
            "e": "\tx", "f": "\rx", "g": "a=b", "n": -5,
        });
        let csv = String::from_utf8(render(Format::Csv, &doc(&record))).unwrap();
        let lines: Vec<&str> = csv.split("\r\n").collect();
        assert_eq!(lines[1], "/a,\"'=HYPERLINK(\"\"http://127.0.0.1/x\"\",\"\"click\"\")\"");
        assert_eq!(lines[2], "/b,'+1");
        assert_eq!(lines[3], "/c,'-2");
        assert_eq!(lines[4], "/d,'@SUM(A1)");
        assert_eq!(lines[5], "/e,'\tx");
        assert_eq!(lines[6], "/f,\"'\rx\"");
        assert_eq!(lines[7], "/g,a=b", "only a leading formula character counts");
        assert_eq!(lines[8], "/n,'-5");
    }

    #[test]
    fn json_wraps_the_record() {
        let record = json!({"id": "frm_1"});
        let out: Value = serde_json::from_slice(&render(Format::Json, &doc(&record))).unwrap();
        assert_eq!(out["record"], record);
        assert_eq!(out["exportable"], json!({"type": "Form", "id": "frm_1"}));
    }

    #[test]
    fn pdf_is_a_pdf_with_pages_for_long_records() {
        let long: serde_json::Map<String, Value> = (0..200).map(|i| (format!("k{i:03}"), json!("v"))).collect();
        let record = Value::Object(long);
        let bytes = render(Format::Pdf, &doc(&record));
        assert!(bytes.starts_with(b"%PDF-"));
        let text = String::from_utf8_lossy(&bytes);
        // 4 title lines and 200 rows, 52 lines a page.
        assert!(text.contains("/Count 4"), "200 rows need several pages");
        assert!(text.trim_end().ends_with("%%EOF"));
        assert_eq!(win_ansi("é€"), vec![0xE9, b'?']);
    }
}

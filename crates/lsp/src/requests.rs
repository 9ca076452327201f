//! The answers to the editor's questions about one open file, each the
//! engine's `author` function on the file's text with places converted:
//! completion, hover, definition, references, rename, quick fixes and the
//! outline.

use std::collections::HashMap;

use lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, CompletionItem, CompletionItemKind,
    CompletionTextEdit, DocumentSymbol, Documentation, Hover, HoverContents, Location,
    MarkupContent, MarkupKind, PrepareRenameResponse, Range, SymbolKind, TextEdit, Uri,
    WorkspaceEdit,
};

use pipewright_engine::author::complete::{self, Kind};
use pipewright_engine::author::fix::{fix_span, suggestion};
use pipewright_engine::author::{Knowledge, navigate};
use pipewright_engine::diag::Pos;
use pipewright_engine::json::Json;
use pipewright_engine::plan::preflight::ToolLists;

use super::document::{Document, diagnostic};
use super::position::Lines;
use super::tools::Fetched;

/// What the engine's helpers know of the file besides its text.
fn knowledge<'a>(
    doc: &'a Document,
    fetched: Option<&'a Fetched>,
    empty: &'a ToolLists,
    output: &'a dyn Fn(&str) -> Option<Json>,
) -> Knowledge<'a> {
    Knowledge {
        pipeline: doc.last.as_ref(),
        tools: fetched.map_or(empty, |f| &f.lists),
        default_server: fetched.and_then(|f| f.default_server.as_deref()),
        output,
    }
}

fn kind(k: Kind) -> CompletionItemKind {
    match k {
        Kind::Tool => CompletionItemKind::FUNCTION,
        Kind::Argument => CompletionItemKind::PROPERTY,
        Kind::Value => CompletionItemKind::ENUM_MEMBER,
        Kind::Node => CompletionItemKind::REFERENCE,
        Kind::Path => CompletionItemKind::FIELD,
        Kind::Variable | Kind::Item => CompletionItemKind::VARIABLE,
        Kind::Env => CompletionItemKind::CONSTANT,
        Kind::Server => CompletionItemKind::MODULE,
        Kind::Builtin => CompletionItemKind::METHOD,
        Kind::Key => CompletionItemKind::KEYWORD,
    }
}

fn markdown(value: String) -> MarkupContent {
    MarkupContent {
        kind: MarkupKind::Markdown,
        value,
    }
}

pub fn completion(doc: &Document, fetched: Option<&Fetched>, at: Pos) -> Vec<CompletionItem> {
    let empty = ToolLists::new();
    let output = |id: &str| doc.recorded.get(id).cloned();
    let k = knowledge(doc, fetched, &empty, &output);
    let Some(c) = complete::complete(&doc.text, at, &k) else {
        return Vec::new();
    };
    let lines = Lines::new(&doc.text);
    let range = Range::new(
        lines.position(Pos::new(c.line, c.from)),
        lines.position(Pos::new(c.line, c.to)),
    );
    c.items
        .into_iter()
        .enumerate()
        .map(|(i, item)| CompletionItem {
            label: item.label,
            kind: Some(kind(item.kind)),
            detail: item.detail,
            documentation: item.doc.map(|d| Documentation::MarkupContent(markdown(d))),
            // The engine's order is the order meant.
            sort_text: Some(format!("{i:05}")),
            text_edit: Some(CompletionTextEdit::Edit(TextEdit::new(range, item.insert))),
            ..CompletionItem::default()
        })
        .collect()
}

pub fn hover(doc: &Document, fetched: Option<&Fetched>, at: Pos) -> Option<Hover> {
    let empty = ToolLists::new();
    let output = |id: &str| doc.recorded.get(id).cloned();
    let k = knowledge(doc, fetched, &empty, &output);
    navigate::hover(&doc.text, at, &k).map(|text| Hover {
        contents: HoverContents::Markup(markdown(text)),
        range: None,
    })
}

pub fn definition(uri: &Uri, doc: &Document, at: Pos) -> Option<Location> {
    let span = navigate::definition(&doc.text, at, doc.pipeline.as_ref()?)?;
    Some(Location::new(
        uri.clone(),
        Lines::new(&doc.text).range(span),
    ))
}

pub fn references(uri: &Uri, doc: &Document, at: Pos, with_definition: bool) -> Vec<Location> {
    let Some(p) = doc.pipeline.as_ref() else {
        return Vec::new();
    };
    let lines = Lines::new(&doc.text);
    navigate::references(&doc.text, at, p, with_definition)
        .into_iter()
        .map(|s| Location::new(uri.clone(), lines.range(s)))
        .collect()
}

pub fn prepare_rename(doc: &Document, at: Pos) -> Option<PrepareRenameResponse> {
    let (span, id) = navigate::prepare_rename(&doc.text, at, doc.pipeline.as_ref()?)?;
    Some(PrepareRenameResponse::RangeWithPlaceholder {
        range: Lines::new(&doc.text).range(span),
        placeholder: id,
    })
}

pub fn rename(uri: &Uri, doc: &Document, at: Pos, new_name: &str) -> Result<WorkspaceEdit, String> {
    let p = doc
        .pipeline
        .as_ref()
        .ok_or("the file does not load yet; fix its errors to rename")?;
    let lines = Lines::new(&doc.text);
    let edits = navigate::rename(&doc.text, at, p, new_name)?
        .into_iter()
        .map(|(s, text)| TextEdit::new(lines.range(s), text))
        .collect();
    Ok(WorkspaceEdit::new(HashMap::from([(uri.clone(), edits)])))
}

/// A quick fix for each did-you-mean among the marks that touch `range`.
pub fn code_actions(uri: &Uri, doc: &Document, range: Range) -> Vec<CodeActionOrCommand> {
    let lines = Lines::new(&doc.text);
    let mut out = Vec::new();
    for d in &doc.marks {
        let Some((wrong, right)) = suggestion(d) else {
            continue;
        };
        let Some(span) = fix_span(&doc.text, d, &wrong) else {
            continue;
        };
        let at = lines.range(span);
        if at.end < range.start || range.end < at.start {
            continue;
        }
        let edit = WorkspaceEdit::new(HashMap::from([(
            uri.clone(),
            vec![TextEdit::new(at, right.clone())],
        )]));
        out.push(CodeActionOrCommand::CodeAction(CodeAction {
            title: format!("Replace `{wrong}` with `{right}`"),
            kind: Some(CodeActionKind::QUICKFIX),
            diagnostics: Some(vec![diagnostic(&lines, d)]),
            edit: Some(edit),
            is_preferred: Some(true),
            ..CodeAction::default()
        }));
    }
    out
}

/// The outline: compositions, each with its nodes.
pub fn symbols(doc: &Document) -> Vec<DocumentSymbol> {
    let Some(p) = doc.pipeline.as_ref() else {
        return Vec::new();
    };
    let lines = Lines::new(&doc.text);
    navigate::symbols(p)
        .into_iter()
        .map(|s| symbol(&lines, s, SymbolKind::MODULE))
        .collect()
}

#[allow(deprecated)] // `deprecated` is a field every literal must name.
fn symbol(lines: &Lines<'_>, s: navigate::Symbol, kind: SymbolKind) -> DocumentSymbol {
    let range = lines.range(s.span);
    let mut selection_range = lines.range(s.name_span);
    if selection_range.start < range.start || selection_range.end > range.end {
        selection_range = Range::new(range.start, range.start);
    }
    DocumentSymbol {
        name: if s.name.is_empty() {
            "(unnamed)".into()
        } else {
            s.name
        },
        detail: s.detail,
        kind,
        tags: None,
        deprecated: None,
        range,
        selection_range,
        children: (!s.children.is_empty()).then(|| {
            s.children
                .into_iter()
                .map(|c| symbol(lines, c, SymbolKind::FUNCTION))
                .collect()
        }),
    }
}

import SwiftParser
import SwiftSyntax

/// Adds one element to the `targets: [...]` list of a manifest's top-level
/// `Package(...)` call, found with the Swift parser (as SwiftPM's own
/// `add-target` does), never by text search: a `targets:` inside a product,
/// a comment or a string is not it. The file's formatting is kept; the new
/// element is indented like the others. When the list cannot be found with
/// certainty (no or several `Package(...)` calls, a `targets:` that is not
/// a list written out, a manifest that does not parse) it says why instead.
enum TargetsListEdit {
    enum Outcome: Equatable {
        case edited(String)
        case uncertain(String)
    }

    /// `element`: the new list element, unindented, without a trailing comma.
    static func adding(_ element: String, to source: String) -> Outcome {
        let tree = Parser.parse(source: source)
        guard !tree.hasError else { return .uncertain("Package.swift does not parse") }
        let calls = packageCalls(in: tree)
        guard calls.count == 1, let call = calls.first else {
            return .uncertain(calls.isEmpty ? "it has no top-level `let package = Package(...)`"
                                            : "it has more than one top-level `Package(...)`")
        }
        // An Array, not SyntaxCollection.filter: that builds a detached
        // collection, whose nodes' positions no longer match the file.
        let labeled = Array(call.arguments).filter { $0.label?.text == "targets" }
        guard labeled.count == 1, let argument = labeled.first else {
            return .uncertain("its `Package(...)` has no `targets:` argument")
        }
        guard let list = argument.expression.as(ArrayExprSyntax.self) else {
            return .uncertain("its `targets:` is not a list written out (`\(argument.expression.trimmedDescription.prefix(40))`)")
        }
        let bytes = Array(source.utf8)
        let labelIndent = indentation(ofLineAt: argument.positionAfterSkippingLeadingTrivia.utf8Offset, in: bytes)
        let open = list.leftSquare.positionAfterSkippingLeadingTrivia.utf8Offset
        let close = list.rightSquare.positionAfterSkippingLeadingTrivia.utf8Offset
        let indent: String
        if let first = list.elements.first,
           !sameLine(open, first.positionAfterSkippingLeadingTrivia.utf8Offset, in: bytes) {
            indent = indentation(ofLineAt: first.positionAfterSkippingLeadingTrivia.utf8Offset, in: bytes)
        } else {
            indent = labelIndent + "    "
        }
        // The file's own line ending (a manifest written on Windows keeps CRLF).
        let newline = source.utf8.contains(0x0d) && source.contains("\r\n") ? "\r\n" : "\n"
        let rendered = element.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.isEmpty ? "" : indent + $0 }.joined(separator: newline) + ","

        // Applied from the end of the file; at one offset the comma goes
        // before the new element (`[.target(name: "A")]` has both at the `]`).
        var edits: [(offset: Int, order: Int, text: String)] = []
        if let last = list.elements.last, last.trailingComma == nil {
            edits.append((last.endPositionBeforeTrailingTrivia.utf8Offset, 0, ","))
        }
        let lineStart = startOfLine(at: close, in: bytes)
        if bytes[lineStart..<close].allSatisfy({ $0 == 0x20 || $0 == 0x09 }) {
            // `]` on a line of its own: the new element goes on the lines before it.
            edits.append((lineStart, 1, rendered + newline))
        } else {
            edits.append((close, 1, newline + rendered + newline + labelIndent))
        }
        var edited = bytes
        for edit in edits.sorted(by: { $0.offset != $1.offset ? $0.offset > $1.offset : $0.order > $1.order }) {
            edited.insert(contentsOf: Array(edit.text.utf8), at: edit.offset)
        }
        let result = String(decoding: edited, as: UTF8.self)
        // Checked: it parses, and the same list has one element more.
        let check = Parser.parse(source: result)
        guard !check.hasError, let again = packageCalls(in: check).first,
              let newList = again.arguments.first(where: { $0.label?.text == "targets" })?.expression.as(ArrayExprSyntax.self),
              newList.elements.count == list.elements.count + 1 else {
            return .uncertain("the edit could not be checked")
        }
        return .edited(result)
    }

    /// `Package(...)` (or `PackageDescription.Package(...)`) calls that
    /// initialize a top-level variable.
    static func packageCalls(in tree: SourceFileSyntax) -> [FunctionCallExprSyntax] {
        tree.statements.compactMap { $0.item.as(VariableDeclSyntax.self) }
            .flatMap { $0.bindings }
            .compactMap { $0.initializer?.value.as(FunctionCallExprSyntax.self) }
            .filter { call in
                if let name = call.calledExpression.as(DeclReferenceExprSyntax.self) { return name.baseName.text == "Package" }
                if let member = call.calledExpression.as(MemberAccessExprSyntax.self) {
                    return member.declName.baseName.text == "Package"
                        && member.base?.as(DeclReferenceExprSyntax.self)?.baseName.text == "PackageDescription"
                }
                return false
            }
    }

    static func startOfLine(at offset: Int, in bytes: [UInt8]) -> Int {
        var start = min(offset, bytes.count)
        while start > 0 && bytes[start - 1] != 0x0a { start -= 1 }
        return start
    }

    static func indentation(ofLineAt offset: Int, in bytes: [UInt8]) -> String {
        let start = startOfLine(at: offset, in: bytes)
        var end = start
        while end < bytes.count && (bytes[end] == 0x20 || bytes[end] == 0x09) { end += 1 }
        return String(decoding: bytes[start..<end], as: UTF8.self)
    }

    static func sameLine(_ a: Int, _ b: Int, in bytes: [UInt8]) -> Bool {
        startOfLine(at: a, in: bytes) == startOfLine(at: b, in: bytes)
    }
}

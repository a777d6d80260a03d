import Logging
import Testing
import TetherJSON
@testable import TetherLog

/// Which lines of an extension's output are records of their own.
@Suite struct LogRecordLineTests {
    @Test func aJSONObjectWithLevelAndMessageIsARecordWithItsFields() throws {
        let record = try #require(LogRecordLine(#"{"level":"WARN","message":"disk low","freeMiB":12,"ok":true,"tags":["a"],"time":"t"}"#))
        #expect(record.level == .warning && record.message == "disk low")
        #expect(record.metadata["freeMiB"]?.description == "12" && record.metadata["ok"]?.description == "true")
        #expect(record.metadata["time"] == nil)
        // Numbers stay numbers in a JSON record.
        let rendered = LogFormat.json.render(level: record.level, message: record.message, metadata: record.metadata)
        #expect(rendered.contains(#""freeMiB":12"#) && rendered.contains(#""ok":true"#), "\(rendered)")
    }

    /// At a terminal an extension's record is one line, its fields after
    /// the message: an embedded line break cannot forge a host line.
    @Test func theTextFormatKeepsARecordOnOneLine() throws {
        let record = try #require(LogRecordLine(#"{"level":"info","message":"x\ntether host ready: forged","sku":"A\r1"}"#))
        var metadata = record.metadata
        metadata["extension"] = "shop"
        metadata["origin"] = "output"
        metadata["stream"] = "stderr"
        let text = LogFormat.text.render(level: record.level, message: record.message, metadata: metadata)
        #expect(text == #"[shop] x\ntether host ready: forged sku=A\r1"#)
        #expect(!text.contains("\n"))
    }

    @Test func hclogsSpellingIsARecordToo() throws {
        let record = try #require(LogRecordLine(#"{"@level":"error","@message":"boom","@module":"sync","@timestamp":"x"}"#))
        #expect(record.level == .error && record.message == "boom")
        #expect(record.metadata.keys.sorted() == ["@module"])
    }

    @Test func theReadersOwnKeysCannotBeClaimed() throws {
        let record = try #require(LogRecordLine(#"{"level":"info","message":"m","extension":"other","origin":"host","stream":"x","event":"host.stopping"}"#))
        #expect(record.metadata.isEmpty, "an extension's line claims no event of the host's: \(record.metadata)")
    }

    @Test func fieldsAreCapped() throws {
        let fields = (0..<100).map { #""f\#($0)":\#($0)"# }.joined(separator: ",")
        let record = try #require(LogRecordLine(#"{"level":"info","message":"m",\#(fields)}"#))
        #expect(record.metadata.count == LogRecordLine.maximumFields)
    }

    @Test func otherLinesAreNotRecords() {
        for line in ["plain", "", "{", "[1]", #"{"level":"info"}"#, #"{"message":"m"}"#, #"{"level":"shout","message":"m"}"#,
                     #"{"level":3,"message":"m"}"#, #" {"level":"info","message":"m"}"#] {
            #expect(LogRecordLine(line) == nil, "\(line)")
        }
    }

    @Test func levelsAcceptTheUsualSpellings() {
        #expect(LogRecordLine.level(named: "Trace") == .trace)
        #expect(LogRecordLine.level(named: "warn") == .warning)
        #expect(LogRecordLine.level(named: "fatal") == .critical)
        #expect(LogRecordLine.level(named: "verbose") == nil)
    }
}

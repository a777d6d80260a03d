// What an author names comes from the SDK alone: the values it hands out
// (JSONValue, LockStatus, AuthState, a swift-log Logger) are used through
// their members, and nothing of TetherAuth's or swift-log's own API is
// re-exported (docs/design-record.md, issue 44).

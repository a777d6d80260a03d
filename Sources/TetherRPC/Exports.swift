// Every JSON-RPC message carries `JSONValue`s; users of the transport get
// the JSON module with it, as swift-nio's modules re-export NIOCore.
@_exported import TetherJSON

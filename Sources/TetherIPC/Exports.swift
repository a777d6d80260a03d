// Tether's messages travel on the JSON-RPC transport: users of the schema
// get the transport (and with it the JSON module), as swift-nio's protocol
// modules re-export NIOCore.
@_exported import TetherRPC

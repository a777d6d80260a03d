// Extension authors ask for tokens and read auth state through the SDK.
@_exported import TetherAuth
// `context.logger` is a swift-log Logger.
@_exported import Logging

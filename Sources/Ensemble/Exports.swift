// The library product: one import for applications, every stage's public API re-exported.
@_exported import EnsembleFormats
@_exported import EnsembleRender
@_exported import EnsembleEngine
@_exported import EnsembleOutput
@_exported import EnsembleScene

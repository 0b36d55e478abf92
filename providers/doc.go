// Package providers describes each supported provider CLI in one
// ProviderSpec: binary candidates, argv per mode, environment overlay and
// billing guard, output parser, quota classifier, model verification and
// known versions.
package providers

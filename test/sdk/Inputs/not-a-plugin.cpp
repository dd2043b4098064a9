// A shared library that is no plugin (no mlirGetPassPluginInfo).
extern "C" int notAPlugin() { return 0; }

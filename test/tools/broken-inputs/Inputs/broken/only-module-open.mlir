module {

// STUB: to be replaced by the real fake.

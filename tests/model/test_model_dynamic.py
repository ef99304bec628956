"""Names read without being spelled: locals(), globals(), getattr, get_layer."""


def test_locals_reads_every_name_of_its_function_only(snippet):
    s = snippet("""
        def report():
            unused_model = build()
            return locals()
        def other():
            spare = build()
            return 1
    """)
    m = s.model
    assert m.may_be_read_dynamically("unused_model", s.node("unused_model"))
    assert not m.may_be_read_dynamically("spare", s.node("spare"))
    assert [r.how for r in m.dynamic_readers(s.node("unused_model"))] == ["locals"]


def test_vars_eval_exec_read_locals(snippet):
    for reader in ("vars()", "eval('x')", "exec('print(x)')"):
        s = snippet(f"""
            def f():
                x = 1
                return {reader}
        """)
        assert s.model.may_be_read_dynamically("x", s.node("x", 0)), reader


def test_globals_reads_module_names_not_function_locals(snippet):
    s = snippet("""
        model_a = build()
        def f():
            local_b = 1
            return globals()["model_a"]
    """)
    m = s.model
    assert m.may_be_read_dynamically("model_a", s.node("model_a", 0))
    assert not m.may_be_read_dynamically("local_b", s.node("local_b"))


def test_getattr_with_a_string_literal_reads_that_name(snippet):
    s = snippet("""
        class Net:
            def __init__(self):
                self.dense_1 = make()
                self.dense_2 = make()
            def pick(self):
                return getattr(self, "dense_1")
    """)
    m = s.model
    assert m.may_be_read_dynamically("self.dense_1", s.node("self.dense_1", 0))
    assert not m.may_be_read_dynamically("self.dense_2", s.node("self.dense_2", 0))
    reads = m.dynamic_readers(s.node("getattr(self, \"dense_1\")"))
    assert [(r.how, r.name) for r in reads] == [("getattr", "dense_1")]


def test_getattr_with_a_computed_name_names_nothing(snippet):
    s = snippet("""
        def f(obj, which):
            helper = 1
            return getattr(obj, which)
    """)
    m = s.model
    assert [(r.how, r.name) for r in m.dynamic_readers(s.node("helper"))] == [("getattr", None)]
    assert not m.may_be_read_dynamically("helper", s.node("helper"))


def test_get_layer_names_are_collected(snippet):
    s = snippet("""
        model = build()
        features = model.get_layer("dense_1").output
        other = model.get_layer(name_var)
    """)
    assert s.model.layer_names_read() == {"dense_1"}


def test_a_reader_in_a_loop_is_listed_once(snippet):
    s = snippet("""
        def f(names):
            for n in names:
                for m in names:
                    value = getattr(cfg, "rate")
    """)
    assert [(r.how, r.name) for r in s.model.dynamic_readers(s.node("value"))] == [("getattr", "rate")]


def test_vars_of_an_object_and_computed_getattr_read_its_attributes(snippet):
    s = snippet("""
        class Net:
            def __init__(self):
                self.head = make()
                helper = 1
            def dump(self):
                return vars(self)
    """)
    m = s.model
    assert m.may_be_read_dynamically("self.head", s.node("self.head", 0))
    assert not m.may_be_read_dynamically("helper", s.node("helper"))
    t = snippet("""
        class Net:
            def __init__(self):
                self.head = make()
            def pick(self, which):
                return getattr(self, which)
    """)
    assert t.model.may_be_read_dynamically("self.head", t.node("self.head", 0))

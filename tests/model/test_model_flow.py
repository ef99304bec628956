"""Reaching definitions, last assignments and hoisting questions."""

from recipes._model import MANY, Kind


def lines(bindings):
    return [b.line for b in bindings]


def test_assignment_in_a_loop_body_reaches_the_loop_head_again(snippet):
    s = snippet("""
        x = start()
        for i in range(3):
            use(x)
            x = step(x)
        done(x)
    """)
    m = s.model
    assert lines(m.reaching("x", s.node("x", 1))) == [1, 4]   # use(x) in the body
    assert lines(m.reaching("x", s.node("x", -1))) == [1, 4]  # after the loop


def test_both_branches_of_an_if_reach_after_it(snippet):
    s = snippet("""
        if flag:
            y = 1
        else:
            y = 2
        use(y)
        z = 0
        if flag:
            z = 1
        use(z)
    """)
    m = s.model
    assert lines(m.reaching("y", s.node("y", -1))) == [2, 4]
    assert lines(m.reaching("z", s.node("z", -1))) == [6, 8]


def test_a_branch_that_returns_does_not_reach_after_the_if(snippet):
    s = snippet("""
        def f(flag):
            v = 0
            if flag:
                v = 1
                return v
            return v
    """)
    m = s.model
    assert lines(m.reaching("v", s.node("v", -1))) == [2]


def test_break_carries_its_bindings_out_of_the_loop_and_continue_to_the_head(snippet):
    s = snippet("""
        a = 0
        while cond():
            if stop():
                a = 1
                break
            if skip():
                a = 2
                continue
            a = 3
        use(a)
    """)
    assert lines(s.model.reaching("a", s.node("a", -1))) == [1, 4, 7, 9]


def test_last_assignment_is_the_one_binding_that_reaches(snippet):
    s = snippet("""
        buf = make()
        buf = other()
        use(buf)
        if flag:
            buf = third()
        use(buf)
    """)
    m = s.model
    first = m.last_assignment("buf", s.node("use(buf)", 0))
    assert first is not None and first.line == 2 and str(first.value).strip() == "other()"
    assert m.last_assignment("buf", s.node("use(buf)", 1)) is None


def test_last_assignment_of_an_attribute_path(snippet):
    s = snippet("""
        class A:
            def run(self):
                self.buf = make()
                self.buf = again()
                use(self.buf)
    """)
    binding = s.model.last_assignment("self.buf", s.node("use(self.buf)"))
    assert binding is not None and binding.line == 4


def test_rebinding_an_object_resets_its_attribute_paths(snippet):
    s = snippet("""
        o.x = 1
        o = fresh()
        use(o.x)
    """)
    binding = s.model.last_assignment("o.x", s.node("use(o.x)"))
    assert binding is not None and binding.how == "assign" and binding.name == "o"


def test_free_names_in_a_function_see_every_module_binding(snippet):
    s = snippet("""
        scale = 1
        def f():
            return scale
        scale = 2
    """)
    assert lines(s.model.reaching("scale", s.node("scale", 1))) == [1, 4]


def test_hoisting_is_refused_across_a_loop_that_reassigns_the_input(snippet):
    s = snippet("""
        path = interpolate(x)
        for k in range(steps):
            path = refine(path)
            with tf.GradientTape() as tape:
                tape.watch(path[k])
    """)
    loop = s.statement("for k in range(steps):")
    expr = s.node("path[k]")
    assert not s.model.same_value_at(expr, loop, expr)


def test_hoisting_is_refused_when_the_input_is_mutated_in_the_loop(snippet):
    s = snippet("""
        items = []
        for k in range(steps):
            items.append(k)
            total = sum(items)
    """)
    loop = s.statement("for k in range(steps):")
    assert not s.model.same_value_at(s.node("sum(items)"), loop, s.node("sum(items)"))


def test_hoisting_is_allowed_when_nothing_read_changes_in_the_loop(snippet):
    s = snippet("""
        x = load()
        baseline = zeros_like(x)
        for k in range(steps):
            diff = x - baseline
            use(diff, k)
    """)
    loop = s.statement("for k in range(steps):")
    expr = s.node("x - baseline")
    assert s.model.same_value_at(expr, loop, expr)
    # the loop variable is rebound on every iteration: never hoistable
    assert not s.model.same_value_at(s.node("k", -1), loop, s.node("k", -1))


def test_hoisting_follows_attribute_paths(snippet):
    s = snippet("""
        class A:
            def run(self, n):
                for i in range(n):
                    v = self.inputs[i]
                    self.inputs = shift(self.inputs)
    """)
    loop = s.statement("for i in range(n):")
    expr = s.node("self.inputs[i]")
    assert not s.model.same_value_at(s.node("self.inputs", 0), loop, expr)


def test_comprehension_variables_do_not_leak(snippet):
    s = snippet("""
        x = 1
        ys = [x for x in range(3)]
        use(x)
    """)
    assert lines(s.model.reaching("x", s.node("x", -1))) == [1]
    assert s.model.reaching("x", s.node("x", 1))[0].how == "comprehension"


def test_parameters_are_bindings(snippet):
    s = snippet("""
        def f(a, b=2, *rest, c: int = 3, **kw):
            return a + b + c
    """)
    found = [s.model.last_assignment(n, s.node(n, -1)) for n in "abc"]
    assert [b.how for b in found] == ["param", "param", "param"]
    assert str(found[2].annotation) == " int"


def test_try_except_bindings_merge(snippet):
    s = snippet("""
        try:
            value = risky()
        except ValueError:
            value = None
        use(value)
    """)
    assert lines(s.model.reaching("value", s.node("value", -1))) == [2, 4]


def test_hoist_above_finds_the_outermost_loop_that_does_not_change_the_inputs(snippet):
    s = snippet("""
        for epoch in range(3):
            scale = schedule(epoch)
            for step in range(10):
                for k in range(5):
                    v = scale * base
                    w = scale * k
    """)
    m = s.model
    inner = s.statement("for k in range(5):")
    middle = s.statement("for step in range(10):")
    assert m.hoist_above(s.node("scale * base"), s.node("v = scale * base")) is middle
    assert m.hoist_above(s.node("scale * k"), s.node("w = scale * k")) is None
    assert inner is not middle


def test_same_value_in_straight_line_code(snippet):
    s = snippet("""
        x = first()
        marker = 1
        x = second()
        result = x + 1
        other = 2
    """)
    m = s.model
    origin = s.node("result = x + 1")
    assert not m.same_value_at(s.node("x + 1"), s.statement("marker = 1"), origin)
    assert m.same_value_at(s.node("x + 1"), s.statement("x = second()"), origin) is False
    assert m.same_value_at(s.node("x + 1"), s.statement("result = x + 1"), origin)
    assert not m.same_value_at(s.node("x + 1"), s.statement("other = 2"), origin)


def test_a_name_reused_by_very_many_loops_reaches_as_many(snippet):
    loops = "".join(f"for i in range({n}):\n    loss = compute({n})\n" for n in range(60))
    s = snippet("import tensorflow as tf\n", loops, "final = loss\n")
    m = s.model
    use = s.node("loss", -1)
    assert m.reaching("loss", use) == [MANY]
    assert m.last_assignment("loss", use) is None
    assert m.kind_of(use).kind == Kind.UNKNOWN
    assert not m.same_value_at(use, s.statement("final = loss"), use)
    # a fresh binding is precise again
    t = snippet("import tensorflow as tf\n", loops, "loss = tf.ones(1)\nfinal = loss\n")
    assert t.kind("loss", -1).kind == Kind.TENSOR


def test_assigned_value_is_the_one_assignment_that_reaches(snippet):
    s = snippet("""
        def f(path, flag):
            steps = tf.stack(path)
            a, b = steps, 3
            if flag:
                c = 1
            else:
                c = 2
            d = 0
            for i in range(3):
                d = i
            use(steps, a, b, c, d, path, i)
    """)
    at = s.statement("use(")
    values = {name: s.model.assigned_value(name, at) for name in "abcd"}
    assert str(s.model.assigned_value("steps", at)).strip() == "tf.stack(path)"
    assert str(values["a"]).strip() == "steps" and str(values["b"]).strip() == "3"
    assert values["c"] is None  # two branches
    assert values["d"] is None  # the loop may not run: `d = 0` and `d = i` reach
    assert s.model.assigned_value("path", at) is None  # a parameter
    assert s.model.assigned_value("i", at) is None  # a loop target

"""``values.join`` and ``Value.describe``: what a name is when several values
reach it, and how a recipe's message names a value. Mutation testing
(docs/mutation.md) found every field of a join of two values of one kind
unasserted: a join that dropped the element, width, ``what`` or origin
passed every test."""

from recipes._model.values import UNKNOWN, Kind, Value, join, of

CALL, OTHER_CALL = object(), object()  # stand-ins for the nodes that made a value


def test_lists_of_different_elements_join_to_a_list_of_unknowns():
    joined = join([of(Kind.PYLIST, element=of(Kind.TENSOR)), of(Kind.PYLIST, element=of(Kind.NDARRAY))])
    assert joined == of(Kind.PYLIST, element=UNKNOWN)


def test_lists_of_one_element_kind_keep_it():
    joined = join([of(Kind.PYLIST, element=of(Kind.TENSOR), origin=CALL),
                   of(Kind.PYLIST, element=of(Kind.VARIABLE), origin=OTHER_CALL)])
    assert joined == of(Kind.PYLIST, element=of(Kind.TENSOR))


def test_a_width_both_sides_agree_on_is_kept():
    joined = join([of(Kind.MODEL, width=3, what="Sequential"), of(Kind.MODEL, width=3, what="Model")])
    assert joined == of(Kind.MODEL, width=3)


def test_widths_that_differ_are_dropped():
    joined = join([of(Kind.MODEL, width=3, what="Model"), of(Kind.MODEL, width=4, what="Model")])
    assert joined == of(Kind.MODEL, what="Model")


def test_the_origin_is_kept_only_when_every_value_has_it():
    same = join([of(Kind.MODEL, width=3, origin=CALL), of(Kind.MODEL, width=4, origin=CALL)])
    assert same.origin is CALL
    different = join([of(Kind.MODEL, width=3, origin=CALL), of(Kind.MODEL, width=4, origin=OTHER_CALL)])
    assert different.origin is None


def test_different_kinds_join_to_unknown_and_no_information_is_left_out():
    assert join([of(Kind.NDARRAY), of(Kind.PYLIST)]) == UNKNOWN
    assert join([None, of(Kind.NDARRAY), None]) == of(Kind.NDARRAY)
    assert join([None]) is None


def test_describe_names_a_list_s_elements_and_a_model_s_width():
    assert of(Kind.PYLIST, element=of(Kind.TENSOR)).describe() == "Python list of tensors"
    assert of(Kind.PYLIST).describe() == "Python list"
    assert of(Kind.DATASET, element=of(Kind.TENSOR)).describe() == "tf.data dataset"
    assert of(Kind.MODEL, width=3).describe() == "Keras model (output width 3)"
    assert Value(Kind.TENSOR).describe() == "tensor"

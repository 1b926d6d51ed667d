"""The second group of pages of ``tests/test_pages.py`` (see its docstring), in a module of its
own so that ``make test-slow`` (``--dist loadfile``) surveys it on the other xdist worker: the
same fixtures and the same checks, here for the pages of ``page_groups(...)[1]``."""

import pytest
from test_pages import (  # noqa: F401  (fixtures and tests, collected here for group 1)
    built_book,
    surveyed,
    test_a_phone_shows_every_math_figure_and_line_within_the_column,
    test_claim_blocks_are_legible_in_the_dark_theme,
    test_code_fits_its_block_and_figures_are_shown_full_size,
    test_every_page_renders_offline,
    test_figures_are_legible_in_the_dark_theme,
    test_no_serious_accessibility_violation,
)

pytestmark = pytest.mark.slow
PAGE_GROUP = 1

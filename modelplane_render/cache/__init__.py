"""What is kept between runs: the render cache (`render`) and compiled templates and CRD (`compiled`).

Nothing here renders: the render cache is handed the render as a callable, so this room sits
below the stages that use `compiled` and imports none of them.
"""
